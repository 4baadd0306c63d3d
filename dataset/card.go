package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Card documents a built dataset: where it came from, how it was made and
// what is in it, so a result can be traced back to inputs and code. It is
// written as card.json (machine-readable) and README.md (for people).
type Card struct {
	Name    string    `json:"name"`
	Env     string    `json:"env"`
	Version string    `json:"version"`
	Created time.Time `json:"created"`
	// Generator is set for synthetic sets, Importer for sets converted
	// from public corpora.
	Generator *Producer `json:"generator,omitempty"`
	Importer  *Producer `json:"importer,omitempty"`
	Seed      uint64    `json:"seed"`
	Sources   []Source  `json:"sources,omitempty"`
	Licence   string    `json:"licence,omitempty"`
	Counts    Counts    `json:"counts"`
	Dedup     *Dedup    `json:"dedup,omitempty"`
	Notes     []string  `json:"notes,omitempty"`
	// Files is filled by WriteSplits: one entry per written split.
	Files map[string]FileInfo `json:"files,omitempty"`
}

// Producer names the code that made the rows and the parameters it ran with.
type Producer struct {
	Name    string         `json:"name"`
	Version string         `json:"version"`
	Params  map[string]any `json:"params,omitempty"`
}

// Source is one input file, identified by content.
type Source struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Rows    int64  `json:"rows"`
	BadRows int64  `json:"bad_rows"`
}

// Counts break the rows down. Splits is filled by WriteSplits when empty;
// the rest is the builder's, because only it knows labels and families.
type Counts struct {
	Splits   map[string]int `json:"splits"`
	Labels   map[string]int `json:"labels,omitempty"`
	Families map[string]int `json:"families,omitempty"`
	// LabelsBySplit is split → label → rows.
	LabelsBySplit map[string]map[string]int `json:"labels_by_split,omitempty"`
}

// Dedup says how duplicates were found and how many were dropped.
type Dedup struct {
	// Key describes the identity used ("5-tuple", "feature vector", …).
	Key     string `json:"key"`
	Seen    int64  `json:"seen"`
	Dropped int64  `json:"dropped"`
	// Exact is false when Dropped counts only duplicates among sampled
	// candidates (constant-memory streaming cannot remember every key).
	Exact bool   `json:"exact"`
	Note  string `json:"note,omitempty"`
}

// FileInfo identifies one written split file.
type FileInfo struct {
	Path       string `json:"path"`
	Rows       int    `json:"rows"`
	SHA256     string `json:"sha256"`
	Revision   string `json:"revision"`
	Commitment string `json:"commitment"`
}

// WriteSplits writes each split as <dir>/<split>.jsonl (one JSON value per
// line, keys in struct order, no HTML escaping), then card.json and a
// README.md card. Every file is written atomically. The card's Files and,
// when empty, Counts.Splits are filled in from what was written.
func WriteSplits(dir string, splits map[string][]any, card *Card) error {
	if card == nil {
		return fmt.Errorf("write splits: card is nil")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write splits: %w", err)
	}
	names := sortedSplitNames(splits)
	card.Files = map[string]FileInfo{}
	fillCounts := len(card.Counts.Splits) == 0
	if fillCounts {
		card.Counts.Splits = map[string]int{}
	}
	for _, name := range names {
		if name == "" || strings.ContainsAny(name, `/\`) || name == "card" {
			return fmt.Errorf("write splits: bad split name %q", name)
		}
		rows := splits[name]
		path := filepath.Join(dir, name+".jsonl")
		h := sha256.New()
		var commit Commitment
		err := WriteFileAtomic(path, func(w io.Writer) error {
			mw := io.MultiWriter(w, h)
			for i, r := range rows {
				b, err := marshalRow(r)
				if err != nil {
					return fmt.Errorf("row %d: %w", i, err)
				}
				commit.Add(b)
				b = append(b, '\n')
				if _, err := mw.Write(b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		card.Files[name] = fileInfo(name+".jsonl", len(rows), h, commit.Sum())
		if fillCounts {
			card.Counts.Splits[name] = len(rows)
		}
	}
	if err := WriteFileAtomic(filepath.Join(dir, "card.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(card)
	}); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, "README.md"), func(w io.Writer) error {
		_, err := io.WriteString(w, card.Markdown())
		return err
	})
}

func fileInfo(path string, rows int, h hash.Hash, commitment string) FileInfo {
	sum := h.Sum(nil)
	return FileInfo{Path: path, Rows: rows, SHA256: hex.EncodeToString(sum), Revision: formatRevision(sum), Commitment: commitment}
}

func marshalRow(r any) ([]byte, error) {
	if raw, ok := r.(json.RawMessage); ok {
		return Canonical(raw), nil
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return []byte(strings.TrimRight(sb.String(), "\n")), nil
}

// sortedSplitNames puts train, dev, test first, then any others by name.
func sortedSplitNames(m map[string][]any) []string {
	rank := map[string]int{"train": 0, "dev": 1, "test": 2}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, iok := rank[names[i]]
		rj, jok := rank[names[j]]
		switch {
		case iok && jok:
			return ri < rj
		case iok != jok:
			return iok
		}
		return names[i] < names[j]
	})
	return names
}

// Markdown renders the card for people.
func (c *Card) Markdown() string {
	var b strings.Builder
	title := c.Name
	if title == "" {
		title = "dataset"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "| %s | %s |\n", k, mdEscape(v))
		}
	}
	row("Environment", c.Env)
	row("Version", c.Version)
	if !c.Created.IsZero() {
		row("Created", c.Created.UTC().Format(time.RFC3339))
	}
	for _, p := range []struct {
		kind string
		p    *Producer
	}{{"Generator", c.Generator}, {"Importer", c.Importer}} {
		if p.p != nil {
			row(p.kind, strings.TrimSpace(p.p.Name+" "+p.p.Version))
			if len(p.p.Params) > 0 {
				pb, _ := json.Marshal(p.p.Params)
				row(p.kind+" parameters", "`"+string(pb)+"`")
			}
		}
	}
	row("Seed", fmt.Sprint(c.Seed))
	row("Licence", c.Licence)
	b.WriteString("\n")

	if len(c.Sources) > 0 {
		b.WriteString("## Sources\n\n| path | sha256 | rows | bad rows |\n|---|---|---:|---:|\n")
		for _, s := range c.Sources {
			fmt.Fprintf(&b, "| %s | `%s` | %d | %d |\n", mdEscape(s.Path), s.SHA256, s.Rows, s.BadRows)
		}
		b.WriteString("\n")
	}
	if len(c.Files) > 0 {
		b.WriteString("## Files\n\n| file | rows | revision | commitment |\n|---|---:|---|---|\n")
		for _, name := range sortedSplitNames(anyKeys(c.Files)) {
			f := c.Files[name]
			fmt.Fprintf(&b, "| %s | %d | `%s` | `%s` |\n", f.Path, f.Rows, f.Revision, f.Commitment)
		}
		b.WriteString("\n")
	}
	writeCounts := func(title string, m map[string]int) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintf(&b, "## %s\n\n| | rows |\n|---|---:|\n", title)
		keys := slices.Sorted(maps.Keys(m))
		if title == "Rows per split" {
			keys = sortedSplitNames(anyKeys(m))
		}
		for _, k := range keys {
			fmt.Fprintf(&b, "| %s | %d |\n", mdEscape(k), m[k])
		}
		b.WriteString("\n")
	}
	writeCounts("Rows per split", c.Counts.Splits)
	writeCounts("Rows per label", c.Counts.Labels)
	writeCounts("Rows per family", c.Counts.Families)
	if len(c.Counts.LabelsBySplit) > 0 {
		labels := map[string]bool{}
		for _, m := range c.Counts.LabelsBySplit {
			for l := range m {
				labels[l] = true
			}
		}
		ls := slices.Sorted(maps.Keys(labels))
		b.WriteString("## Labels by split\n\n| split |")
		for _, l := range ls {
			fmt.Fprintf(&b, " %s |", mdEscape(l))
		}
		b.WriteString("\n|---|" + strings.Repeat("---:|", len(ls)) + "\n")
		for _, s := range sortedSplitNames(anyKeys(c.Counts.LabelsBySplit)) {
			fmt.Fprintf(&b, "| %s |", s)
			for _, l := range ls {
				fmt.Fprintf(&b, " %d |", c.Counts.LabelsBySplit[s][l])
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if c.Dedup != nil {
		exact := "exact over the whole input"
		if !c.Dedup.Exact {
			exact = "among sampled candidates only"
		}
		fmt.Fprintf(&b, "## De-duplication\n\nKey: %s. Rows seen: %d. Duplicates dropped: %d (%s).\n", mdEscape(c.Dedup.Key), c.Dedup.Seen, c.Dedup.Dropped, exact)
		if c.Dedup.Note != "" {
			fmt.Fprintf(&b, "\n%s\n", c.Dedup.Note)
		}
		b.WriteString("\n")
	}
	if len(c.Notes) > 0 {
		b.WriteString("## Notes\n\n")
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func anyKeys[V any](m map[string]V) map[string][]any {
	out := make(map[string][]any, len(m))
	for k := range m {
		out[k] = nil
	}
	return out
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}
