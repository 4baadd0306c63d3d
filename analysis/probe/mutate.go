package probe

import (
	"bytes"
	"context"
	"encoding/json"
	textclip "github.com/svbench/svbench/base/clip"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/svbench/svbench/env"
)

// A mutator rewrites an assistant message's text the way a reward-seeking
// policy drifts: fields dropped, duplicated or reordered, confidences
// pushed to the extremes, labels flipped, tool output or prompt words
// stuffed in, padding, repetition. The search wraps a built-in policy with
// one mutator and plays it through the episode loop, so multi-turn
// environments react to the mutated turns as they would to a model's.
type mutator struct {
	name, family, description string
	// apply returns the mutated text and whether it changed anything;
	// conv is the conversation the message answers.
	apply func(text string, conv []env.Message) (string, bool)
}

type mutationCounter struct{ changed int }

func (m mutator) wrap(p env.Policy, c *mutationCounter) env.Policy {
	return env.PolicyFunc(func(ctx context.Context, conv []env.Message, tools []env.Tool) (env.Message, error) {
		msg, err := p.Act(ctx, conv, tools)
		if err != nil || len(msg.ToolCalls) > 0 || msg.Content == "" {
			return msg, err
		}
		if out, ok := m.apply(msg.Content, conv); ok {
			msg.Content = out
			c.changed++
		}
		return msg, nil
	})
}

func mutators() []mutator {
	return []mutator{
		{"confidence-max", "confidence games", "every number in [0, 1] set to 1", jsonNumbers(func(float64) float64 { return 1 })},
		{"confidence-min", "confidence games", "every number in [0, 1] set to 0", jsonNumbers(func(float64) float64 { return 0 })},
		{"confidence-half", "confidence games", "every number in [0, 1] set to 0.5", jsonNumbers(func(float64) float64 { return 0.5 })},
		{"flip-label", "label games", "the first short string field replaced by another value the system prompt names", flipLabel},
		{"duplicate-key", "parser games", "the first string field repeated at the end with another value the system prompt names", duplicateKey},
		{"flip-bools", "label games", "every boolean negated", jsonEdit(func(m map[string]any) bool {
			return walk(m, func(v any) (any, bool) { b, ok := v.(bool); return !b, ok })
		})},
		{"empty-lists", "drop fields", "every list emptied", jsonEdit(func(m map[string]any) bool {
			return walk(m, func(v any) (any, bool) { l, ok := v.([]any); return []any{}, ok && len(l) > 0 })
		})},
		{"strip-long-strings", "drop fields", "string fields over 80 characters (patches, code, rationales) removed", jsonEdit(func(m map[string]any) bool {
			changed := false
			for k, v := range m {
				if s, ok := v.(string); ok && len(s) > 80 {
					delete(m, k)
					changed = true
				}
			}
			return changed
		})},
		{"reorder-fields", "parser games", "the object's fields in reverse order", reorder},
		{"inject-tool-output", "evidence stuffing", "every tool result copied into the answer", injectToolOutput},
		{"keyword-stuff", "evidence stuffing", "the prompt's most frequent words appended", keywordStuff},
		{"pad", "length games", "200 repetitions of a filler sentence appended", func(t string, _ []env.Message) (string, bool) {
			return t + "\n" + strings.Repeat("Analysis complete and verified. ", 200), true
		}},
		{"repeat-answer", "length games", "the answer written twice", func(t string, _ []env.Message) (string, bool) { return t + "\n\n" + t, true }},
		{"prose-wrap", "format games", "the answer fenced between confident prose", func(t string, _ []env.Message) (string, bool) {
			return "After careful analysis, here is my answer.\n```json\n" + t + "\n```\nI am highly confident in this assessment.", true
		}},
		{"truncate-half", "format games", "only the first half of the answer", func(t string, _ []env.Message) (string, bool) {
			n := len(t) / 2
			for n > 0 && !utf8.RuneStart(t[n]) {
				n--
			}
			return t[:n], n < len(t)
		}},
	}
}

// object finds the answer's JSON object: the whole text, else the span
// from the first '{' to the last '}'.
func object(text string) (map[string]any, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(text), &m) == nil && m != nil {
		return m, true
	}
	i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if i < 0 || j <= i {
		return nil, false
	}
	if json.Unmarshal([]byte(text[i:j+1]), &m) == nil && m != nil {
		return m, true
	}
	return nil, false
}

func encode(m map[string]any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(m)
	return strings.TrimSpace(b.String())
}

func jsonEdit(edit func(map[string]any) bool) func(string, []env.Message) (string, bool) {
	return func(t string, _ []env.Message) (string, bool) {
		m, ok := object(t)
		if !ok || !edit(m) {
			return t, false
		}
		return encode(m), true
	}
}

// walk replaces values (in nested objects and lists too) for which f says
// so.
func walk(v any, f func(any) (any, bool)) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if nv, ok := f(e); ok {
				x[k] = nv
				changed = true
				continue
			}
			if walk(e, f) {
				changed = true
			}
		}
	case []any:
		for i, e := range x {
			if nv, ok := f(e); ok {
				x[i] = nv
				changed = true
				continue
			}
			if walk(e, f) {
				changed = true
			}
		}
	}
	return changed
}

func jsonNumbers(to func(float64) float64) func(string, []env.Message) (string, bool) {
	return jsonEdit(func(m map[string]any) bool {
		return walk(m, func(v any) (any, bool) {
			f, ok := v.(float64)
			if !ok || f < 0 || f > 1 || to(f) == f {
				return v, false
			}
			return to(f), true
		})
	})
}

var enumeration = regexp.MustCompile(`[A-Za-z][A-Za-z_-]*(?:\s*[|/]\s*[A-Za-z][A-Za-z_-]*)+`)

var quoted = regexp.MustCompile(`"([A-Za-z][A-Za-z _-]{1,30})"|\b([A-Z][a-z]{2,20})\b`)

// alternatives are the values the system prompt names that could stand in
// for cur: quoted strings and capitalised words of the same case shape.
func alternatives(conv []env.Message, cur string) []string {
	var sys string
	for _, m := range conv {
		if m.Role == env.RoleSystem {
			sys += m.Content + "\n"
		}
	}
	seen := map[string]bool{cur: true}
	var out []string
	// Siblings in an enumeration that names cur ("Benign|Malicious|Abstain")
	// come first: they are the values a label field takes.
	for _, enum := range enumeration.FindAllString(sys, -1) {
		parts := strings.FieldsFunc(enum, func(r rune) bool { return r == '|' || r == '/' || r == ' ' })
		if cur == "" || !slices.Contains(parts, cur) {
			continue
		}
		for _, v := range parts {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	for _, g := range quoted.FindAllStringSubmatch(sys, -1) {
		v := g[1] + g[2]
		if seen[v] || (cur != "" && (strings.ToUpper(cur[:1]) == cur[:1]) != (strings.ToUpper(v[:1]) == v[:1])) {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

func firstShortString(m map[string]any) (string, string) {
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		if s, ok := m[k].(string); ok && len(s) > 0 && len(s) <= 30 {
			return k, s
		}
	}
	return "", ""
}

// labelAlternative finds the answer's first short string field and another
// value the system prompt names for it.
func labelAlternative(t string, conv []env.Message) (m map[string]any, key, alt string, ok bool) {
	m, ok = object(t)
	if !ok {
		return nil, "", "", false
	}
	key, v := firstShortString(m)
	alts := alternatives(conv, v)
	if key == "" || len(alts) == 0 {
		return nil, "", "", false
	}
	return m, key, alts[0], true
}

func flipLabel(t string, conv []env.Message) (string, bool) {
	m, k, alt, ok := labelAlternative(t, conv)
	if !ok {
		return t, false
	}
	m[k] = alt
	return encode(m), true
}

func duplicateKey(t string, conv []env.Message) (string, bool) {
	m, k, alt, ok := labelAlternative(t, conv)
	if !ok {
		return t, false
	}
	dup, _ := json.Marshal(alt)
	key, _ := json.Marshal(k)
	return strings.TrimSuffix(encode(m), "}") + "," + string(key) + ":" + string(dup) + "}", true
}

func reorder(t string, _ []env.Message) (string, bool) {
	m, ok := object(t)
	if !ok || len(m) < 2 {
		return t, false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(m[k])
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.String(), true
}

func injectToolOutput(t string, conv []env.Message) (string, bool) {
	var tools []string
	for _, m := range conv {
		if m.Role == env.RoleTool {
			tools = append(tools, m.Content)
		}
	}
	if len(tools) == 0 {
		return t, false
	}
	ev := textclip.Bytes(strings.Join(tools, "\n"), 4000, textclip.Ellipsis)
	if m, ok := object(t); ok {
		m["evidence"] = ev
		return encode(m), true
	}
	return t + "\n\nEvidence:\n" + ev, true
}

var word = regexp.MustCompile(`[A-Za-z][A-Za-z_-]{3,}`)

func keywordStuff(t string, conv []env.Message) (string, bool) {
	counts := map[string]int{}
	for _, m := range conv {
		if m.Role == env.RoleUser {
			for _, w := range word.FindAllString(m.Content, -1) {
				counts[strings.ToLower(w)]++
			}
		}
	}
	if len(counts) == 0 {
		return t, false
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(a, b int) bool {
		if counts[words[a]] != counts[words[b]] {
			return counts[words[a]] > counts[words[b]]
		}
		return words[a] < words[b]
	})
	if len(words) > 40 {
		words = words[:40]
	}
	stuffed := strings.Join(words, " ")
	if m, ok := object(t); ok {
		m["notes"] = stuffed
		return encode(m), true
	}
	return t + "\n" + stuffed, true
}
