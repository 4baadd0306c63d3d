package redteam

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Import formats.
const (
	FormatJBB       = "jbb"
	FormatHarmBench = "harmbench"
	FormatXSTest    = "xstest"
)

// ImportFormats lists the corpora the importers read.
var ImportFormats = []string{FormatJBB, FormatHarmBench, FormatXSTest}

// csvTable is a CSV with a header, read with line and column context.
type csvTable struct {
	name string
	r    *csv.Reader
	col  map[string]int
}

func openCSV(name string, r io.Reader, required ...string) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: line 1: read header: %w", name, err)
	}
	t := &csvTable{name: name, r: cr, col: map[string]int{}}
	for i, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		t.col[strings.ToLower(h)] = i
	}
	var missing []string
	for _, c := range required {
		if _, ok := t.col[strings.ToLower(c)]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: line 1: header lacks column(s) %s (found: %s)", name, strings.Join(missing, ", "), strings.Join(head, ", "))
	}
	return t, nil
}

// next returns the next record and its line, io.EOF at the end.
func (t *csvTable) next() ([]string, int, error) {
	rec, err := t.r.Read()
	line, _ := t.r.FieldPos(0)
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, pe.Line, fmt.Errorf("%s: line %d, column %d: %w", t.name, pe.Line, pe.Column, pe.Err)
		}
		return nil, line, err
	}
	return rec, line, nil
}

func (t *csvTable) get(rec []string, name string) string {
	if i, ok := t.col[strings.ToLower(name)]; ok && i < len(rec) {
		return strings.TrimSpace(rec[i])
	}
	return ""
}

// need returns a required field or an error naming line, column and field.
func (t *csvTable) need(rec []string, line int, name string) (string, error) {
	v := t.get(rec, name)
	if v == "" {
		return "", fmt.Errorf("%s: line %d, column %d (%s): empty", t.name, line, t.col[strings.ToLower(name)]+1, name)
	}
	if len(v) > maxRowField {
		return "", fmt.Errorf("%s: line %d, column %d (%s): %d bytes, more than %d", t.name, line, t.col[strings.ToLower(name)]+1, name, len(v), maxRowField)
	}
	return v, nil
}

// ImportJBB reads JailbreakBench's JBB-Behaviors CSV (Behavior, Goal,
// Target, Category, Source). benign, when not nil, is the benign-behaviours
// CSV of the same release: its rows are the topic-matched twins of the
// harmful rows in the same order, and are paired with them by position.
func ImportJBB(name string, harmful io.Reader, benignName string, benign io.Reader) ([]Scenario, error) {
	read := func(name string, r io.Reader, kind string) ([]Scenario, error) {
		t, err := openCSV(name, r, "Behavior", "Goal", "Target", "Category", "Source")
		if err != nil {
			return nil, err
		}
		var out []Scenario
		for {
			rec, line, err := t.next()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			goal, err := t.need(rec, line, "Goal")
			if err != nil {
				return nil, err
			}
			catName, err := t.need(rec, line, "Category")
			if err != nil {
				return nil, err
			}
			cat, err := categoryFor(catName)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d, column %d (Category): %w", name, line, t.col["category"]+1, err)
			}
			n := len(out) + 1
			s := Scenario{ID: fmt.Sprintf("jbb-%03d", n), Kind: kind, Category: cat, Pair: fmt.Sprintf("jbb-%03d", n),
				Request: goal, Target: t.get(rec, "Target"), Source: "jbb:" + t.get(rec, "Source"), SourceCategory: catName,
				AttackType: t.get(rec, "Behavior")}
			if kind == KindHarmful {
				s.Behavior = goal
			} else {
				s.ID += "-benign"
			}
			out = append(out, s)
		}
	}
	h, err := read(name, harmful, KindHarmful)
	if err != nil {
		return nil, err
	}
	if benign == nil {
		return h, nil
	}
	b, err := read(benignName, benign, KindBenign)
	if err != nil {
		return nil, err
	}
	if len(b) != len(h) {
		return nil, fmt.Errorf("%s has %d rows and %s %d: JBB's benign behaviours pair with the harmful ones row by row, so the counts must match", name, len(h), benignName, len(b))
	}
	var out []Scenario
	for i := range h {
		out = append(out, h[i], b[i])
	}
	return out, nil
}

// ImportHarmBench reads HarmBench's behaviours CSV (Behavior,
// FunctionalCategory, SemanticCategory, ContextString, BehaviorID).
// HarmBench has no benign twins: its rows measure attacks and refusals,
// not over-refusal.
func ImportHarmBench(name string, r io.Reader) ([]Scenario, error) {
	t, err := openCSV(name, r, "Behavior", "FunctionalCategory", "SemanticCategory", "BehaviorID")
	if err != nil {
		return nil, err
	}
	var out []Scenario
	seen := map[string]int{}
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		beh, err := t.need(rec, line, "Behavior")
		if err != nil {
			return nil, err
		}
		id, err := t.need(rec, line, "BehaviorID")
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("%s: line %d, column %d (BehaviorID): %q already used on line %d", name, line, t.col["behaviorid"]+1, id, prev)
		}
		seen[id] = line
		sem := t.get(rec, "SemanticCategory")
		cat, err := categoryFor(sem)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d, column %d (SemanticCategory): %w", name, line, t.col["semanticcategory"]+1, err)
		}
		out = append(out, Scenario{ID: "hb-" + id, Kind: KindHarmful, Category: cat, Behavior: beh, Request: joinContext(t.get(rec, "ContextString"), beh),
			Context: t.get(rec, "ContextString"), Source: "harmbench:" + t.get(rec, "FunctionalCategory"), SourceCategory: sem})
	}
}

func joinContext(ctx, beh string) string {
	if ctx == "" {
		return beh
	}
	return ctx + "\n\n---\n\n" + beh
}

// ImportXSTest reads an XSTest-style prompt list (prompt, label = safe or
// unsafe, optional id, type, focus, note). XSTest's unsafe prompts are
// contrasts of safe ones (type "contrast_<t>" against "<t>", same focus),
// and are paired so; unpaired rows keep no twin.
func ImportXSTest(name string, r io.Reader) ([]Scenario, error) {
	t, err := openCSV(name, r, "prompt", "label")
	if err != nil {
		return nil, err
	}
	var out []Scenario
	var keys []string // base type + focus of each row
	safeBy := map[string]int{}
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		p, err := t.need(rec, line, "prompt")
		if err != nil {
			return nil, err
		}
		id := t.get(rec, "id")
		if id == "" {
			id = fmt.Sprint(line)
		}
		typ := t.get(rec, "type")
		s := Scenario{ID: "xstest-" + id, Category: Unspecified, Request: p, Source: "xstest:" + typ, SourceCategory: typ}
		key := strings.TrimPrefix(strings.ToLower(typ), "contrast_") + "\x00" + strings.ToLower(t.get(rec, "focus"))
		switch l := strings.ToLower(t.get(rec, "label")); l {
		case "safe":
			s.Kind = KindBenign
			if _, dup := safeBy[key]; !dup {
				safeBy[key] = len(out)
			}
		case "unsafe":
			s.Kind, s.Behavior = KindHarmful, p
		default:
			return nil, fmt.Errorf("%s: line %d, column %d (label): %q, want safe or unsafe", name, line, t.col["label"]+1, l)
		}
		out = append(out, s)
		keys = append(keys, key)
	}
	for i := range out {
		if out[i].Kind != KindHarmful {
			continue
		}
		if j, ok := safeBy[keys[i]]; ok && out[j].Pair == "" {
			out[i].Pair, out[j].Pair = out[j].ID, out[j].ID
		}
	}
	return out, nil
}

// WriteJSONL writes scenarios as dataset rows both environments load.
func WriteJSONL(w io.Writer, ss []Scenario) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range ss {
		row := struct {
			ID string `json:"id"`
			*Scenario
		}{ss[i].ID, &ss[i]}
		if err := enc.Encode(row); err != nil {
			return err
		}
	}
	return nil
}
