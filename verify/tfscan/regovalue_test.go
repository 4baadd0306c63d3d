package tfscan

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/util"

	adapter "github.com/aquasecurity/trivy/pkg/iac/adapters/terraform"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/terraform/parser"
)

// trivyParseRawInput is what trivy's rego scanner does to its input.
func trivyParseRawInput(input any) (ast.Value, error) {
	if err := util.RoundTrip(&input); err != nil {
		return nil, err
	}
	return ast.InterfaceToValue(input)
}

// sameValue is strict equality of OPA values: same kinds throughout and
// numbers with the same text (ast.Compare would take 1 and 1.0 as equal,
// but sprintf and string concatenation in a check would not).
func sameValue(a, b ast.Value) bool {
	switch x := a.(type) {
	case ast.Number:
		y, ok := b.(ast.Number)
		return ok && string(x) == string(y)
	case *ast.Array:
		y, ok := b.(*ast.Array)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i := range x.Len() {
			if !sameValue(x.Elem(i).Value, y.Elem(i).Value) {
				return false
			}
		}
		return true
	case ast.Object:
		y, ok := b.(ast.Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		same := true
		x.Foreach(func(k, v *ast.Term) {
			w := y.Get(k)
			if w == nil || !sameValue(v.Value, w.Value) {
				same = false
			}
		})
		return same
	default:
		return ast.Compare(a, b) == 0 && ast.TypeName(a) == ast.TypeName(b)
	}
}

func checkRegoValue(t *testing.T, x any) {
	t.Helper()
	want, wantErr := trivyParseRawInput(x)
	got, gotErr := regoValue(x)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("error mismatch: direct %v, JSON round trip %v", gotErr, wantErr)
	}
	if wantErr == nil && !sameValue(got, want) {
		t.Fatalf("direct conversion differs from trivy's JSON round trip\ndirect: %v\njson:   %v", got, want)
	}
}

// TestRegoValueMatchesRoundTrip holds the direct conversion to trivy's
// JSON round trip on the adapted state of every parity case and on the
// corners JSON treats specially.
func TestRegoValueMatchesRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := scanner(t)
	for name, files := range parityCases(t) {
		fsys, _, err := s.memFS(files)
		if err != nil {
			t.Fatal(err)
		}
		p := parser.New(keyedFS{MapFS: fsys, key: "k"}, "", parser.OptionWithDownloads(false), parser.OptionWithSkipCachedModules(true))
		if err := p.ParseFS(ctx, "."); err != nil {
			continue
		}
		modules, err := p.EvaluateAll(ctx)
		if err != nil || len(modules) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) { checkRegoValue(t, adapter.Adapt(modules).ToRego()) })
	}
	for name, x := range map[string]any{
		"invalid utf-8 string": "a\xffb\xfe",
		"invalid utf-8 key":    map[string]any{"k\xff": 1},
		"nil slice":            map[string]any{"s": []any(nil)},
		"nil map":              map[string]any{"m": map[string]any(nil)},
		"floats":               []any{1.5, 1e21, 1e-7, 0.0, -0.0, 100.0},
		"typed values":         map[string]any{"t": time.Unix(0, 0).UTC(), "b": []byte("x"), "ss": []string{"a"}, "i64": int64(-3), "u": uint8(7)},
		"html characters":      "<a href='x'>&</a>",
		"nan":                  math.NaN(),
		"infinity":             math.Inf(1),
		"big int":              math.MaxInt64,
	} {
		// trivy's input is always an object; its round trip of a bare
		// scalar is not what it does to the same scalar inside one.
		t.Run(name, func(t *testing.T) { checkRegoValue(t, map[string]any{"v": x}) })
	}
}

// FuzzRegoValue builds arbitrary ToRego-shaped values from the fuzzer's
// bytes (raw strings included) and holds the direct conversion to the
// JSON round trip.
func FuzzRegoValue(f *testing.F) {
	f.Add([]byte{4, 2, 1, 1, 'k', 3, 9, 1, 0, 0})
	f.Add([]byte{5, 3, 1, 2, 0xff, 'a', 6, 1, 2, 3, 4, 5, 6, 7, 8, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &valueReader{data: data}
		checkRegoValue(t, map[string]any{"v": r.value(0)})
	})
}

type valueReader struct {
	data []byte
	pos  int
}

func (r *valueReader) byte() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

func (r *valueReader) str() string {
	n := int(r.byte() % 8)
	var b []byte
	for range n {
		b = append(b, r.byte())
	}
	return string(b)
}

func (r *valueReader) value(depth int) any {
	op := r.byte() % 10
	if depth > 6 && (op == 4 || op == 5) {
		op = 1
	}
	switch op {
	case 1:
		return r.str()
	case 2:
		return r.byte()%2 == 0
	case 3:
		return int(int8(r.byte())) * int(r.byte())
	case 4:
		m := map[string]any{}
		for range int(r.byte() % 4) {
			m[r.str()] = r.value(depth + 1)
		}
		return m
	case 5:
		var s []any
		for range int(r.byte() % 4) {
			s = append(s, r.value(depth+1))
		}
		if s == nil {
			s = []any{}
		}
		return s
	case 6:
		var b [8]byte
		for i := range b {
			b[i] = r.byte()
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
	case 7:
		return []any(nil)
	case 8:
		return map[string]any(nil)
	case 9:
		return []string{r.str()}
	}
	return nil
}
