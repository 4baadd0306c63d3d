package configaudit

import (
	"bytes"
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/svbench/svbench/verify/yamlsafe"
)

// A verifier must judge the file, not the file's opinion of itself: a patch
// that adds `kube-linter.io/ignore-all` or `#trivy:ignore:*` makes the
// scanners go quiet without changing what the configuration does. Before
// the default rubric re-verifies a patched file it removes every
// suppression the original did not already carry, so the patched file is
// judged as the original tool would have judged it had the patch left
// suppressions alone. The suppressions themselves are listed (and cost
// penaltySuppression): a reviewer rejects a change that silences a scanner.

// kube-linter reads exactly these annotation keys on an object's own
// metadata (pkg/ignore in kube-linter v0.8.3).
const (
	kubeLinterIgnoreAll    = "kube-linter.io/ignore-all"
	kubeLinterIgnorePrefix = "ignore-check.kube-linter.io/"
)

// trivyIgnoreToken matches what trivy's ignore parser (pkg/iac/ignore)
// accepts: any whitespace-separated token that, after leading '#', '/' and
// '*' are trimmed, starts with "trivy:" or "tfsec:" — in a comment or not.
var trivyIgnoreToken = regexp.MustCompile(`(^|\s)([#/*]*)(trivy|tfsec):`)

// neutraliseSuppressions returns patched with every suppression the
// original lacks removed, and a description of each one removed. A
// Kubernetes patched file that does not parse is returned unchanged (the
// structure check refuses it anyway). The error reports a suppression that
// cannot be removed where it stands (one reached through a YAML alias or
// merge key): such a patch is refused as destructive, never re-verified.
func neutraliseSuppressions(fixtureType string, original, patched []byte) ([]byte, []string, error) {
	if fixtureType == FixtureTF {
		out, removed := neutraliseTrivyIgnores(original, patched)
		return out, removed, nil
	}
	return neutraliseKubeLinterIgnores(original, patched)
}

// neutraliseTrivyIgnores rewrites the ignore tokens of every line the
// original does not contain verbatim ("trivy:" becomes "trivy-"), so trivy
// no longer reads them and every other byte stays where it was.
func neutraliseTrivyIgnores(original, patched []byte) ([]byte, []string) {
	if !trivyIgnoreToken.Match(patched) {
		return patched, nil
	}
	kept := map[string]bool{}
	for _, l := range strings.Split(string(original), "\n") {
		if trivyIgnoreToken.MatchString(l) {
			kept[strings.TrimSpace(l)] = true
		}
	}
	lines := strings.Split(string(patched), "\n")
	var removed []string
	for i, l := range lines {
		if !trivyIgnoreToken.MatchString(l) || kept[strings.TrimSpace(l)] {
			continue
		}
		removed = append(removed, fmt.Sprintf("line %d: %s", i+1, clip.Bytes(strings.TrimSpace(l), 120, clip.Ellipsis)))
		lines[i] = trivyIgnoreToken.ReplaceAllString(l, "$1$2$3-")
	}
	if len(removed) == 0 {
		return patched, nil
	}
	return []byte(strings.Join(lines, "\n")), removed
}

// neutraliseKubeLinterIgnores deletes ignore annotations from each object's
// metadata unless the same object in the original carries the same key.
// Only documents that change are re-rendered; the others keep their bytes.
func neutraliseKubeLinterIgnores(original, patched []byte) ([]byte, []string, error) {
	if !bytes.Contains(patched, []byte(kubeLinterIgnoreAll)) && !bytes.Contains(patched, []byte(kubeLinterIgnorePrefix)) {
		return patched, nil, nil
	}
	lim := yamlsafe.Limits{MaxBytes: MaxFixtureBytes}
	had := map[string]bool{} // object key + "\x00" + annotation key
	if docs, err := yamlsafe.Split("original.yaml", original, lim); err == nil {
		for _, d := range docs {
			if d.Empty() {
				continue
			}
			obj := objectKey(d.Node)
			for _, k := range ignoreAnnotationKeys(d.Node) {
				had[obj+"\x00"+k] = true
			}
		}
	}
	docs, err := yamlsafe.Split("patched.yaml", patched, lim)
	if err != nil {
		return patched, nil, nil
	}
	var removed []string
	var out bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			out.WriteString("---\n")
		}
		raw := d.Raw
		if !d.Empty() {
			obj := objectKey(d.Node)
			ann := mpath(d.Node, "metadata", "annotations")
			var dropped []string
			for _, k := range ignoreAnnotationKeys(d.Node) {
				if !had[obj+"\x00"+k] && mdel(ann, k) {
					dropped = append(dropped, k)
				}
			}
			if len(dropped) > 0 {
				slices.Sort(dropped)
				for _, k := range dropped {
					removed = append(removed, fmt.Sprintf("%s: annotation %s", obj, k))
				}
				if r, err := renderYAML([]*yaml.Node{d.Node}); err == nil {
					raw = r
				}
			}
			if k := hiddenIgnoreKey(d.Node, obj, had); k != "" {
				return patched, removed, fmt.Errorf("%s: annotation %s is added through a YAML alias or merge key and cannot be removed for re-verification", obj, k)
			}
		}
		out.Write(raw)
		if len(raw) > 0 && raw[len(raw)-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	if len(removed) == 0 {
		return patched, nil, nil
	}
	return out.Bytes(), removed, nil
}

// hiddenIgnoreKey returns an ignore key the object still carries once its
// YAML is resolved (aliases and merge keys applied) that the original
// object did not have, or "".
func hiddenIgnoreKey(doc *yaml.Node, obj string, had map[string]bool) string {
	v, err := yamlsafe.Value(doc)
	if err != nil {
		return ""
	}
	m, _ := v.(map[string]any)
	md, _ := m["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	for k := range ann {
		if (k == kubeLinterIgnoreAll || strings.HasPrefix(k, kubeLinterIgnorePrefix)) && !had[obj+"\x00"+k] {
			return k
		}
	}
	return ""
}

// ignoreAnnotationKeys lists the kube-linter ignore keys on the object's
// own metadata.annotations, the only place kube-linter reads them.
func ignoreAnnotationKeys(doc *yaml.Node) []string {
	ann := mpath(doc, "metadata", "annotations")
	if ann == nil || ann.Kind != yaml.MappingNode {
		return nil
	}
	var keys []string
	for i := 0; i+1 < len(ann.Content); i += 2 {
		k := ann.Content[i].Value
		if k == kubeLinterIgnoreAll || strings.HasPrefix(k, kubeLinterIgnorePrefix) {
			keys = append(keys, k)
		}
	}
	return keys
}

// objectKey names a Kubernetes object as the structure inventory does.
func objectKey(doc *yaml.Node) string {
	md := mget(doc, "metadata")
	return scalarValue(mget(doc, "kind")) + "/" + scalarValue(mget(md, "namespace")) + "/" + scalarValue(mget(md, "name"))
}
