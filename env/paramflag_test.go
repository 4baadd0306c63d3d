package env

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestApplyParamFlag(t *testing.T) {
	cwd, _ := os.Getwd()
	pack := ParamFlag{Name: "policy-pack", Param: "policy_packs", Path: true, Repeatable: true, Implies: map[string]string{"mode": "policy"}}
	model := ParamFlag{Name: "target-model", Param: "target_model", Role: ModelTarget}
	file := ParamFlag{Name: "keep-unsafe", Param: "keep_unsafe", Path: true}
	sep := string(os.PathListSeparator)
	for _, c := range []struct {
		name    string
		f       ParamFlag
		values  []string
		params  map[string]string
		want    map[string]string
		wantErr string
	}{
		{"not given", pack, nil, map[string]string{"a": "1"}, map[string]string{"a": "1"}, ""},
		{"paths made absolute and joined, implied mode set", pack, []string{"packs/acme", "/abs/b"}, map[string]string{"tool_budget": "3"},
			map[string]string{"tool_budget": "3", "mode": "policy", "policy_packs": filepath.Join(cwd, "packs/acme") + sep + "/abs/b"}, ""},
		{"implied value already given agrees", pack, []string{"/p"}, map[string]string{"mode": "policy"}, map[string]string{"mode": "policy", "policy_packs": "/p"}, ""},
		{"implied value contradicted", pack, []string{"/p"}, map[string]string{"mode": "standard"}, nil, "mode=policy, but mode=standard"},
		{"resumed run's value differs", model, []string{"m2"}, map[string]string{"target_model": "m1"}, nil, "target_model=m2, but target_model=m1"},
		{"resumed run's value repeated", model, []string{"m1"}, map[string]string{"target_model": "m1"}, map[string]string{"target_model": "m1"}, ""},
		{"one-value flag given twice", model, []string{"a", "b"}, nil, nil, "given 2 times"},
		{"one path, not repeatable", file, []string{"x", "y"}, nil, nil, "given 2 times"},
		{"empty path", pack, []string{" "}, nil, nil, "empty path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(c.params)
			got, err := ApplyParamFlag(c.f, c.values, c.params)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrBadParam) {
					t.Fatalf("err = %v, want ErrBadParam mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if len(c.params) != before {
				t.Error("the caller's map was modified")
			}
		})
	}
}

func TestRegisterRefusesInconsistentFlags(t *testing.T) {
	newEnv := func(Options) (Environment, error) { return nil, errors.New("unused") }
	type config struct {
		Dirs  string `param:"dirs" doc:"directories"`
		Other string `param:"other" doc:"another setting"`
	}
	params := config{}
	for _, c := range []struct {
		name  string
		first []ParamFlag
		next  []ParamFlag
		want  string
	}{
		{"undeclared parameter", nil, []ParamFlag{{Name: "dir", Param: "nope"}}, "does not declare"},
		{"dashed name", nil, []ParamFlag{{Name: "--dir", Param: "dirs"}}, "without dashes"},
		{"same flag, other meaning", []ParamFlag{{Name: "dir", Param: "dirs"}}, []ParamFlag{{Name: "dir", Param: "other"}}, "means parameter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewRegistry()
			if c.first != nil {
				r.Register(Spec{ID: "first", New: newEnv, Config: params, Flags: c.first})
			}
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), c.want) {
					t.Fatalf("panic = %v, want one mentioning %q", p, c.want)
				}
			}()
			r.Register(Spec{ID: "second", New: newEnv, Config: params, Flags: c.next})
		})
	}
	// The same flag with the same meaning is shared and listed once.
	r := NewRegistry()
	shared := ParamFlag{Name: "dir", Param: "dirs", Path: true}
	r.Register(Spec{ID: "a", New: newEnv, Config: params, Flags: []ParamFlag{shared}})
	r.Register(Spec{ID: "b", New: newEnv, Config: params, Flags: []ParamFlag{shared}})
	fl := r.ParamFlags()
	if len(fl) != 1 || strings.Join(fl[0].Envs, ",") != "a,b" {
		t.Fatalf("ParamFlags = %+v, want one flag of a and b", fl)
	}
}
