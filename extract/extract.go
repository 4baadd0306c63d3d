// Package extract pulls the JSON object out of a model's free-text answer,
// following the reference's order of attempts so rewards stay comparable:
// the whole text, then the first fenced block, then the first balanced
// {...} starting at the first '{'.
package extract

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// MaxInput bounds how much model output is examined. Model output is hostile:
// a gigabyte answer must not cost a gigabyte of parsing.
const MaxInput = 1 << 20

// fence matches the reference's pattern: three backticks, an optional json
// tag (any case), lazily up to the closing fence.
var fence = regexp.MustCompile("(?is)```(?:json)?\\s*(.*?)\\s*```")

// Object returns the raw JSON object found in text, or false. Only objects
// count: a top-level array or scalar is "no object".
func Object(text string) (json.RawMessage, bool) {
	return Find(text, asObject)
}

// Find tries the reference's candidates in order (the whole text, the first
// fenced block, the first balanced {...}) and returns the first that accept
// takes. Parsers with their own notion of a valid object (Python's lenient
// json, say) plug in here so the order of attempts is defined once.
func Find[T any](text string, accept func(candidate string) (T, bool)) (T, bool) {
	if len(text) > MaxInput {
		text = text[:MaxInput]
	}
	if v, ok := accept(text); ok {
		return v, true
	}
	if m := fence.FindStringSubmatch(text); m != nil {
		if v, ok := accept(m[1]); ok {
			return v, true
		}
	}
	if span, ok := firstBalanced(text); ok {
		if v, ok := accept(span); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// Map decodes the object Object finds into a map; numbers stay json.Number
// so callers can tell 1 from 1.0 from "1" where the reference does.
func Map(text string) (map[string]any, bool) {
	raw, ok := Object(text)
	if !ok {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func asObject(s string) (json.RawMessage, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") || !json.Valid([]byte(s)) {
		return nil, false
	}
	return json.RawMessage(s), true
}

// firstBalanced scans from the first '{' and returns the span up to its
// matching '}', ignoring braces inside JSON strings (with escapes).
func firstBalanced(s string) (string, bool) {
	start := strings.IndexByte(s, '{')
	if start < 0 {
		return "", false
	}
	depth := 0
	inString, escaped := false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[start : i+1], true
			}
		}
	}
	return "", false
}
