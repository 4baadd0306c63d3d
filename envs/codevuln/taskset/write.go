package taskset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Write stores t under root/<t.ID>/ in the task format. It validates the task
// first, refuses to overwrite an existing directory, and omits the synthesised
// go.mod (see GoMod).
func Write(root string, t Task) error {
	check := t
	check.Src = cloneMap(t.Src)
	if check.Mode == "" {
		check.Mode = ModeTested
	}
	if err := validate(&check, t.ID); err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	dir := filepath.Join(root, t.ID)
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("task %s: %s already exists; remove it or choose another output directory", t.ID, dir)
	}
	m := meta{
		ID: t.ID, Title: t.Title, Language: t.Language, CWE: t.CWE, Severity: t.Severity,
		Description: t.Description, Files: t.Files, API: t.API, Difficulty: t.Difficulty,
		Source: t.Source, Pytest: t.Pytest,
	}
	if t.Mode != ModeTested {
		m.Mode = t.Mode
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("task %s: encoding task.json: %w", t.ID, err)
	}
	files := map[string][]byte{"task.json": buf.Bytes()}
	for prefix, part := range map[string]map[string][]byte{"src": t.Src, "fix": t.Fix, "tests/visible": t.Visible, "tests/hidden": t.Hidden} {
		for name, body := range part {
			if prefix == "src" && name == "go.mod" && t.Language == Go {
				continue
			}
			files[prefix+"/"+name] = body
		}
	}
	for variant, part := range t.NearMiss {
		for name, body := range part {
			files["nearmiss/"+variant+"/"+name] = body
		}
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	return nil
}

func cloneMap(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
