package configaudit

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/svbench/svbench/env"
)

// Rows a trainer exported from the reference name the fixture by the path
// it had inside the reference's installed package
// ("/app/.venv/lib/python3.12/site-packages/dataset/fixtures/tf/bad.tf") and
// carry the configuration itself in the user prompt:
//
//	File path: <path>
//
//	Configuration:
//	```text
//	<configuration>
//	```
//
// svbench reads the configuration from the prompt and never opens the path.

// referenceConfig returns the configuration inside the reference prompt's
// "Configuration:" fence, or false when body is not in that form.
func referenceConfig(body string) (string, bool) {
	const head = "Configuration:\n```"
	b := strings.TrimLeft(body, "\n")
	if !strings.HasPrefix(b, head) {
		return "", false
	}
	rest := b[len(head):]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.ContainsAny(rest[:nl], " `") {
		return "", false // the fence's info string is one word ("text")
	}
	rest = rest[nl+1:]
	end := strings.LastIndex(rest, "```")
	if end < 0 || strings.TrimSpace(rest[end+3:]) != "" {
		return "", false
	}
	// The reference wrote "```text\n{config}\n```": drop the newline it added.
	return strings.TrimSuffix(rest[:end], "\n"), true
}

// relativeFixturePath turns the absolute path a reference row names into the
// relative path svbench shows and accepts in tool calls: the leading slash
// goes, nothing else changes. A path that does not clean to itself or climbs
// out ("..") stays as it was, and checkPath refuses it.
func relativeFixturePath(p string) string {
	if !path.IsAbs(p) {
		return p
	}
	rel := strings.TrimLeft(p, "/")
	if rel == "" || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
		return p
	}
	return rel
}

// TrainerView is the E2 rule for the text the reference environment graded
// when it computed a hosted trainer's recorded reward (see env.TrainerView).
//
// The reference's answer-reading rewards (format_reward and
// reward_config_auditing) read the final message's raw output, its
// reasoning followed by its answer as the model wrote them, and took an
// answer only when that whole text was one JSON object or one fenced block
// (Python's json.loads on the text, then on a fence that is the whole
// text). A thinking model's raw output starts with its reasoning, so on
// hosted runs those rewards saw no answer, even where content holds a valid
// one. On the 16 rows of the reference's E2 hybrid run this reproduces every
// recorded component: 8 rows hold a valid answer (6 in content, 2 only in
// reasoning_content) and all 16 were recorded with format 0 and
// config_auditing 0; reading content alone would disagree on 6 rows, and
// reading reasoning_content for an empty content with svbench's lenient
// extraction on 8. Tool messages, which tool_observation reads, are kept.
func (e *Env) TrainerView(msgs []env.Message) ([]env.Message, string) {
	out := make([]env.Message, len(msgs))
	copy(out, msgs)
	var notes []string
	if n := jsonToolResults(out); n > 0 {
		notes = append(notes, fmt.Sprintf("%d tool result(s) read from Python literals as the reference did", n))
	}
	note := func(s string) string {
		if s != "" {
			notes = append(notes, s)
		}
		return strings.Join(notes, "; ")
	}
	last := -1
	for i := range out {
		if out[i].Role == env.RoleAssistant {
			last = i
		}
	}
	if last < 0 {
		return out, note("")
	}
	m := &out[last]
	raw := m.Content
	if m.Reasoning != "" {
		raw = m.Reasoning + "\n" + m.Content
		if strings.TrimSpace(m.Content) == "" {
			raw = m.Reasoning
		}
	}
	if wholeAnswer(raw) {
		if m.Reasoning == "" {
			return out, note("")
		}
		m.Content, m.Reasoning = raw, ""
		return out, note("final message read as its raw output (reasoning_content, then content): one JSON answer")
	}
	had := strings.TrimSpace(raw) != ""
	m.Content, m.Reasoning = "", ""
	if !had {
		return out, note("")
	}
	return out, note(fmt.Sprintf("final message's raw output (reasoning_content, then content; %d bytes) is not one JSON object or one fenced block, so the reference read no answer from it", len(raw)))
}

// wholeAnswer reports whether text, trimmed, is one JSON object or one
// fenced block: the only forms the reference's answer parsing accepted.
func wholeAnswer(text string) bool {
	t := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}"):
		return true
	case strings.HasPrefix(t, "```") && strings.HasSuffix(t, "```") && len(t) > 6:
		inner := t[3 : len(t)-3]
		return !strings.Contains(inner, "```")
	}
	return false
}

// Tool results in a reference row are Python reprs of the finding list
// ("[{'tool': 'semgrep', 'rule_id': …, 'start_line': None}]"): its
// tool_observation reward read them with json.loads and then
// ast.literal_eval. pyToolResult does the same for svbench's reader, which
// takes JSON, by translating such a literal to JSON.

// maxPyLiteral bounds a tool result translated from a Python literal, and
// maxPyDepth its nesting: trainer rows are hostile input.
const (
	maxPyLiteral = 1 << 20
	maxPyDepth   = 64
)

// pyLiteralJSON translates a Python literal of dicts, lists, tuples,
// strings, numbers, None, True and False to JSON; false for anything else.
func pyLiteralJSON(s string) (string, bool) {
	if len(s) > maxPyLiteral {
		return "", false
	}
	p := pyParser{s: s}
	var b strings.Builder
	if !p.value(&b, 0) {
		return "", false
	}
	p.space()
	if p.i != len(p.s) {
		return "", false
	}
	return b.String(), true
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) value(b *strings.Builder, depth int) bool {
	if depth > maxPyDepth {
		return false
	}
	p.space()
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.seq(b, depth, '}', true)
	case c == '[':
		return p.seq(b, depth, ']', false)
	case c == '(':
		return p.seq(b, depth, ')', false)
	case c == '\'' || c == '"':
		return p.str(b)
	case strings.HasPrefix(p.s[p.i:], "None"):
		p.i += 4
		b.WriteString("null")
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		b.WriteString("true")
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		b.WriteString("false")
	default:
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("+-0123456789.eE", p.s[p.i]) >= 0 {
			p.i++
		}
		num := p.s[start:p.i]
		if num == "" || !json.Valid([]byte(strings.TrimPrefix(num, "+"))) {
			return false
		}
		b.WriteString(strings.TrimPrefix(num, "+"))
	}
	return true
}

// seq reads a dict (pairs) or a list/tuple up to close, trailing comma
// allowed, writing a JSON object or array.
func (p *pyParser) seq(b *strings.Builder, depth int, close byte, pairs bool) bool {
	p.i++
	open, end := "[", "]"
	if pairs {
		open, end = "{", "}"
	}
	b.WriteString(open)
	for n := 0; ; n++ {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == close {
			p.i++
			b.WriteString(end)
			return true
		}
		if n > 0 {
			if p.i >= len(p.s) || p.s[p.i] != ',' {
				return false
			}
			p.i++
			p.space()
			if p.i < len(p.s) && p.s[p.i] == close {
				p.i++
				b.WriteString(end)
				return true
			}
			b.WriteByte(',')
		}
		if pairs {
			p.space()
			if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
				return false // JSON keys are strings
			}
			if !p.str(b) {
				return false
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return false
			}
			p.i++
			b.WriteByte(':')
		}
		if !p.value(b, depth+1) {
			return false
		}
	}
}

// str reads a quoted Python string with the common escapes and writes it as
// a JSON string.
func (p *pyParser) str(b *strings.Builder) bool {
	q := p.s[p.i]
	p.i++
	var out strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			enc, err := json.Marshal(out.String())
			if err != nil {
				return false
			}
			b.Write(enc)
			return true
		case c == '\\' && p.i+1 < len(p.s):
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'n':
				out.WriteByte('\n')
			case 't':
				out.WriteByte('\t')
			case 'r':
				out.WriteByte('\r')
			case '\\', '\'', '"':
				out.WriteByte(e)
			case 'x', 'u':
				n := map[byte]int{'x': 2, 'u': 4}[e]
				if p.i+n > len(p.s) {
					return false
				}
				v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
				if err != nil {
					return false
				}
				out.WriteRune(rune(v))
				p.i += n
			default:
				out.WriteByte('\\')
				out.WriteByte(e)
			}
		case c == '\n':
			return false
		default:
			out.WriteByte(c)
			p.i++
		}
	}
	return false
}

// jsonToolResults rewrites tool results given as Python literals to JSON,
// counting how many it rewrote. Results already in JSON are left alone.
func jsonToolResults(msgs []env.Message) int {
	n := 0
	for i := range msgs {
		m := &msgs[i]
		if m.Role != env.RoleTool || json.Valid([]byte(m.Content)) {
			continue
		}
		if j, ok := pyLiteralJSON(strings.TrimSpace(m.Content)); ok {
			m.Content = j
			n++
		}
	}
	return n
}
