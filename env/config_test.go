package env

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type judgeBits struct {
	Source string  `param:"reward_source" enum:"executable,llm_judge" doc:"who grades"`
	Weight float64 `param:"judge_weight" min:"0" max:"10" doc:"judge weight"`
}

type toyConfig struct {
	Budget int    `param:"tool_budget" min:"0" max:"64" doc:"tool calls"`
	Strict bool   `param:"strict" doc:"refuse loose answers"`
	Dir    string `param:"dir" doc:"a directory"`
	judgeBits
	Mode   string `param:"mode" enum:"standard,policy" doc:"condition"`
	hidden int    //nolint:unused // not a parameter: decoding must skip an unexported field
}

func (c toyConfig) Validate() error {
	if c.Mode != "policy" && c.Dir != "" {
		return errors.New("dir applies to mode=policy")
	}
	return nil
}

var toyDefaults = toyConfig{Budget: 8, Mode: "standard", judgeBits: judgeBits{Source: "executable", Weight: 1}}

func TestConfigDecodes(t *testing.T) {
	for _, c := range []struct {
		name    string
		params  map[string]string
		want    toyConfig
		wantErr string
	}{
		{name: "defaults", want: toyDefaults},
		{name: "every kind", params: map[string]string{"tool_budget": " 3 ", "strict": "true", "judge_weight": "0.1", "reward_source": "llm_judge", "mode": "policy", "dir": "/x"},
			want: toyConfig{Budget: 3, Strict: true, Dir: "/x", Mode: "policy", judgeBits: judgeBits{Source: "llm_judge", Weight: 0.1}}},
		{name: "int out of range", params: map[string]string{"tool_budget": "65"}, wantErr: "tool_budget=\"65\": want an integer in [0, 64]"},
		{name: "int not a number", params: map[string]string{"tool_budget": "many"}, wantErr: "want an integer"},
		{name: "number out of range", params: map[string]string{"judge_weight": "11"}, wantErr: "want a number in [0, 10]"},
		{name: "NaN", params: map[string]string{"judge_weight": "NaN"}, wantErr: "want a number"},
		{name: "bool", params: map[string]string{"strict": "yes"}, wantErr: "want true or false"},
		{name: "enum with suggestion", params: map[string]string{"mode": "polcy"}, wantErr: `did you mean "policy"`},
		{name: "unknown with suggestion", params: map[string]string{"tool_budgt": "3"}, wantErr: `did you mean "tool_budget"`},
		{name: "across fields", params: map[string]string{"dir": "/x"}, wantErr: "dir applies to mode=policy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ConfigOf("toy", Options{Params: c.params}, toyDefaults)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrBadParam) {
					t.Fatalf("err = %v, want ErrBadParam mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// TestRegistryConfigures: the registry decodes once, hands the struct to
// the constructor and records every value in force, defaults included.
func TestRegistryConfigures(t *testing.T) {
	r := NewRegistry()
	var got any
	r.Register(Spec{ID: "toy", Aliases: []string{"t1"}, Config: toyDefaults, New: func(o Options) (Environment, error) {
		got = o.Config
		return nil, nil
	}})
	if _, err := r.New("t1", Options{Params: map[string]string{"tool_budget": "2"}}); err != nil {
		t.Fatal(err)
	}
	want := toyDefaults
	want.Budget = 2
	if got != want {
		t.Fatalf("constructor got %#v, want %#v", got, want)
	}
	c, err := r.Configure("toy", map[string]string{"tool_budget": "2"})
	if err != nil {
		t.Fatal(err)
	}
	wantResolved := map[string]string{"tool_budget": "2", "strict": "false", "dir": "", "reward_source": "executable", "judge_weight": "1", "mode": "standard"}
	if !maps.Equal(c.Resolved, wantResolved) || c.Given["tool_budget"] != "2" || len(c.Given) != 1 {
		t.Fatalf("Configure = %+v, want resolved %v", c, wantResolved)
	}
	// The recorded form keeps each value's type; its text is Resolved.
	wantValues := map[string]string{"tool_budget": "2", "strict": "false", "dir": `""`, "reward_source": `"executable"`, "judge_weight": "1", "mode": `"standard"`}
	for k, v := range wantValues {
		if string(c.Values[k]) != v {
			t.Errorf("Values[%s] = %s, want %s", k, c.Values[k], v)
		}
	}
	if !maps.Equal(c.Values.Text(), c.Resolved) {
		t.Errorf("Values.Text() = %v, Resolved %v", c.Values.Text(), c.Resolved)
	}
	// A default given explicitly is the same configuration.
	if !maps.Equal(r.Resolved("toy", map[string]string{"tool_budget": "8"}), r.Resolved("toy", nil)) {
		t.Fatal("tool_budget=8 (the default) resolves differently from no parameter")
	}
	if r.Resolved("toy", map[string]string{"nope": "1"}) != nil {
		t.Fatal("Resolved accepted an unknown parameter")
	}
	params, _ := r.Params("toy")
	var names []string
	for _, p := range params {
		names = append(names, p.Name+"="+p.Default)
	}
	if strings.Join(names, " ") != "tool_budget=8 strict=false dir= reward_source=executable judge_weight=1 mode=standard" {
		t.Fatalf("params in declaration order with defaults: %v", names)
	}
	help := r.ParamHelp()
	for _, want := range []string{"t1 (toy)", "tool_budget integer in [0, 64], default 8: tool calls", "mode standard|policy", `dir text, default "": a directory`} {
		if !strings.Contains(help, want) {
			t.Errorf("ParamHelp lacks %q:\n%s", want, help)
		}
	}
}

// TestConfigDeclarationsRefused: a malformed configuration struct stops
// the program at registration, not a run.
func TestConfigDeclarationsRefused(t *testing.T) {
	type noBounds struct {
		N int `param:"n" doc:"n"`
	}
	type noDoc struct {
		S string `param:"s"`
	}
	type badType struct {
		L []string `param:"l" doc:"l"`
	}
	type twice struct {
		A string `param:"a" doc:"a"`
		B string `param:"a" doc:"b"`
	}
	type badDefault struct {
		N int `param:"n" min:"1" max:"3" doc:"n"`
	}
	for name, cfg := range map[string]any{"no bounds": noBounds{}, "no doc": noDoc{}, "slice": badType{}, "twice": twice{}, "default out of range": badDefault{}, "not a struct": 3} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("Register accepted %T", cfg)
				}
			}()
			NewRegistry().Register(Spec{ID: "x", Config: cfg, New: func(Options) (Environment, error) { return nil, nil }})
		})
	}
}

// TestConfigOfWrongType: a constructor handed another environment's
// configuration says so instead of panicking.
func TestConfigOfWrongType(t *testing.T) {
	if _, err := ConfigOf("toy", Options{Config: 3}, toyDefaults); err == nil || !strings.Contains(err.Error(), "want env.toyConfig") {
		t.Fatalf("err = %v", err)
	}
}

// TestConfigValuesText: a recorded value reads back as the registry's
// canonical text whether it was recorded with its type or, as runs did
// before, as a string; floats in Go's shortest form either way.
func TestConfigValuesText(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`6`, "6"},
		{`"6"`, "6"},
		{`0.5`, "0.5"},
		{`1e-07`, "1e-07"},
		{`1E-7`, "1e-07"},
		{`1.0`, "1"},
		{`true`, "true"},
		{`"true"`, "true"},
		{`"executable"`, "executable"},
		{`""`, ""},
		{` 12 `, "12"},
	} {
		got := ConfigValues{"k": json.RawMessage(c.raw)}.Text()["k"]
		if got != c.want {
			t.Errorf("Text(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
	if ConfigValues(nil).Text() != nil {
		t.Error("nil values read as a configuration")
	}
	for _, f := range []float64{0.5, 1e-07, 3, 1e21, 0.1 + 0.2} {
		raw := formatField(reflect.ValueOf(f))
		if !json.Valid(raw) {
			t.Errorf("formatField(%v) = %s: not JSON", f, raw)
		}
		if got := valueText(raw); got != strconv.FormatFloat(f, 'g', -1, 64) {
			t.Errorf("%v recorded as %s reads %q", f, raw, got)
		}
	}
}

// TestChangedText: the names whose text differs, sorted; a name one side
// lacks reads as "" there, so an empty value and an absent one agree.
func TestChangedText(t *testing.T) {
	a := map[string]string{"tool_budget": "6", "mode": "standard", "dir": "", "only_a": "x"}
	b := map[string]string{"tool_budget": "4", "mode": "standard", "only_b": "y", "empty_b": ""}
	if got, want := ChangedText(a, b), []string{"only_a", "only_b", "tool_budget"}; !slices.Equal(got, want) {
		t.Errorf("ChangedText = %v, want %v", got, want)
	}
	if got := ChangedText(b, a); !slices.Equal(got, []string{"only_a", "only_b", "tool_budget"}) {
		t.Errorf("ChangedText is not symmetric: %v", got)
	}
	if ChangedText(nil, nil) != nil || ShowText("") != "(unset)" || ShowText("6") != "6" {
		t.Error("empty configurations differ, or ShowText misreads a value")
	}
}
