package configaudit

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/yamlsafe"
)

// BuildStats reports what an import saw.
type BuildStats struct {
	Files      int
	Documents  int
	Duplicates int
	Skipped    []string // files or documents left out, with the reason
}

// BuildFromRoots imports a user's configuration: every Kubernetes document
// under k8sRoot (*.yaml, *.yml; multi-document files split) and every .tf
// file under tfRoot becomes a row, de-duplicated by content hash and
// labelled with the verifiers' findings. Rows come out sorted by path.
func (e *Env) BuildFromRoots(ctx context.Context, k8sRoot, tfRoot string) ([]Row, BuildStats, error) {
	var st BuildStats
	v, err := e.verifiers(ctx)
	if err != nil {
		return nil, st, err
	}
	seen := map[string]bool{}
	var rows []Row
	add := func(ft, p string, content []byte) error {
		h := contentHash(content)
		if seen[h] {
			st.Duplicates++
			return nil
		}
		seen[h] = true
		fs, err := v.all(ctx, ft, verify.File{Path: p, Content: content}, h)
		if err != nil {
			st.Skipped = append(st.Skipped, fmt.Sprintf("%s: %v", p, err))
			return nil
		}
		rows = append(rows, Row{
			ID: "e2-" + ft + "-" + h[:12], FixtureType: ft, Path: p, Content: string(content),
			Labels: Labels{Mutations: []string{}, Expected: dedupViolations(findingViolations(fs)), Source: "verifiers"},
			Meta:   map[string]any{"source": "import", "sha256": h},
		})
		return ctx.Err()
	}
	walk := func(root string, match func(string) bool, each func(rel string, b []byte) error) error {
		if root == "" {
			return nil
		}
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("walk %s: %w", root, err)
			}
			if d.IsDir() {
				if strings.HasPrefix(d.Name(), ".") && p != root {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !match(p) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if info.Size() > MaxFixtureBytes {
				st.Skipped = append(st.Skipped, fmt.Sprintf("%s: %d bytes, over the %d-byte limit", rel, info.Size(), MaxFixtureBytes))
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st.Files++
			return each(rel, b)
		})
	}
	isYAML := func(p string) bool { return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") }
	err = walk(k8sRoot, isYAML, func(rel string, b []byte) error {
		docs, err := yamlsafe.Split(rel, b, yamlsafe.Limits{MaxBytes: MaxFixtureBytes})
		if err != nil {
			st.Skipped = append(st.Skipped, err.Error())
			return nil
		}
		var kept []yamlsafe.Document
		for _, d := range docs {
			if d.Empty() || scalarValue(mget(d.Node, "kind")) == "" || scalarValue(mget(d.Node, "apiVersion")) == "" {
				continue
			}
			kept = append(kept, d)
		}
		for _, d := range kept {
			st.Documents++
			p := rel
			if len(kept) > 1 {
				// One row per document; the path says which one it was.
				ext := filepath.Ext(rel)
				p = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(rel, ext), d.Index+1, ext)
			}
			content := strings.TrimSpace(string(d.Raw)) + "\n"
			if err := add(FixtureK8s, p, []byte(content)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	err = walk(tfRoot, func(p string) bool { return strings.HasSuffix(p, ".tf") }, func(rel string, b []byte) error {
		st.Documents++
		return add(FixtureTF, rel, b)
	})
	if err != nil {
		return nil, st, err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Path < rows[j].Path })
	return rows, st, nil
}

// StratumKey is the split stratum of a row: fixture type and whether it is
// clean, so every split gets both kinds in proportion.
func (r Row) StratumKey() string {
	if len(r.Labels.Expected) == 0 {
		return r.FixtureType + "/clean"
	}
	return r.FixtureType + "/findings"
}

// GroupKey is the unit a split keeps whole. A generated row's group is its
// baseline and mutation set ("tf/aws_s3|s3-public-acl+s3-unencrypted"): its
// variants differ only in names, so they belong to one split, or a model
// could learn an answer in training and meet a renamed copy in test. Any
// other row is its own group (its content hash).
func (r Row) GroupKey() string {
	if g, ok := r.Meta["group"].(string); ok && g != "" {
		return g
	}
	return "sha256:" + contentHash([]byte(r.Content))
}
