package extract

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
)

// NonFinite is the value of one of the constants Python's json module
// accepts beyond the JSON grammar: NaN, Infinity or -Infinity. PyMap decodes
// them to this type rather than to json.Number so that code written for
// standard JSON never mistakes one for an ordinary number: a type switch
// that does not name NonFinite treats it as a value of the wrong type and
// fails closed. Code reproducing Python converts it with float64(v), which
// is what Python's float() returns for it.
//
// NonFinite has no MarshalJSON: encoding one fails (as encoding a NaN
// float64 does) instead of inventing a value.
type NonFinite float64

// String returns the constant as Python's json module spells it.
func (n NonFinite) String() string {
	switch f := float64(n); {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return "NaN"
}

// PyMap is Map under the grammar of Python's json.loads, which also accepts
// NaN, Infinity and -Infinity wherever a value may start (never inside
// strings, never as keys). The candidates are tried in the same order as
// Object; numbers stay json.Number and the three constants decode to
// NonFinite. Without those constants in the text PyMap is exactly Map.
func PyMap(text string) (map[string]any, bool) {
	if len(text) > MaxInput {
		text = text[:MaxInput]
	}
	if !strings.Contains(text, "NaN") && !strings.Contains(text, "Infinity") {
		return Map(text)
	}
	return Find(text, pyObject)
}

// pyObject accepts a candidate that Python's json.loads reads as an object.
func pyObject(s string) (map[string]any, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return nil, false
	}
	std, marked := pyConstants(s)
	if !json.Valid([]byte(std)) {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(std))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if marked {
		restoreObject(m)
	}
	return m, true
}

// Markers. pyConstants replaces each constant by a JSON string holding a
// NUL followed by the constant. So that no string of the model's can be
// mistaken for a marker, every NUL the input's strings contain (JSON can
// only spell one as the escape \u0000) is doubled, and restore halves runs
// of NULs again: a string that is one NUL and a constant is then always a
// marker.
const (
	nul       = "\x00"
	nulEscape = `\u0000`
)

// pyConstants rewrites NaN, Infinity and -Infinity where a JSON value may
// start to marker strings, doubling \u0000 escapes inside strings. It
// reports whether it changed anything.
func pyConstants(s string) (string, bool) {
	var out bytes.Buffer
	changed := false
	var stack []byte
	expectValue := true
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					if strings.HasPrefix(s[j:], nulEscape) {
						out.WriteString(s[last : j+len(nulEscape)])
						out.WriteString(nulEscape)
						last = j + len(nulEscape)
						changed = true
						j += len(nulEscape)
						continue
					}
					j++
				}
				j++
			}
			i = j + 1
			expectValue = false
			continue
		case c == '{':
			stack = append(stack, c)
			expectValue = false
		case c == '[':
			stack = append(stack, c)
			expectValue = true
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectValue = false
		case c == ':':
			expectValue = true
		case c == ',':
			expectValue = len(stack) > 0 && stack[len(stack)-1] == '['
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			if expectValue {
				if tok := pyConstantAt(s[i:]); tok != "" {
					out.WriteString(s[last:i])
					out.WriteString(`"` + nulEscape + tok + `"`)
					i += len(tok)
					last = i
					changed = true
					expectValue = false
					continue
				}
			}
			expectValue = false
		}
		i++
	}
	if !changed {
		return s, false
	}
	out.WriteString(s[last:])
	return out.String(), true
}

func pyConstantAt(s string) string {
	for _, tok := range [...]string{"NaN", "Infinity", "-Infinity"} {
		if strings.HasPrefix(s, tok) {
			return tok
		}
	}
	return ""
}

// restoreObject turns markers back into NonFinite values and halves the
// doubled NULs of ordinary strings and keys, in place.
func restoreObject(m map[string]any) {
	var renamed map[string]any
	for k, v := range m {
		m[k] = restore(v)
		if strings.Contains(k, nul) {
			if renamed == nil {
				renamed = map[string]any{}
			}
			renamed[k] = m[k]
		}
	}
	for k, v := range renamed {
		delete(m, k)
		m[halveNULs(k)] = v
	}
}

func restore(v any) any {
	switch x := v.(type) {
	case string:
		if !strings.Contains(x, nul) {
			return x
		}
		switch x {
		case nul + "NaN":
			return NonFinite(math.NaN())
		case nul + "Infinity":
			return NonFinite(math.Inf(1))
		case nul + "-Infinity":
			return NonFinite(math.Inf(-1))
		}
		return halveNULs(x)
	case []any:
		for i, e := range x {
			x[i] = restore(e)
		}
	case map[string]any:
		restoreObject(x)
	}
	return v
}

func halveNULs(s string) string { return strings.ReplaceAll(s, nul+nul, nul) }
