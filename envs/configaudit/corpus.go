package configaudit

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
)

//go:embed corpus
var corpusFS embed.FS

// Baseline is one secure configuration of the embedded corpus.
type Baseline struct {
	Name    string // e.g. "k8s/deployment", "tf/aws_s3"
	Fixture string
	// Path is the file path the model sees (a plausible repository path).
	Path    string
	Content []byte
}

var (
	corpusOnce sync.Once
	corpus     []Baseline
	corpusErr  error
)

// Corpus returns the embedded baselines, sorted by name. Kubernetes
// baselines are re-rendered once in the generator's YAML style so a mutation
// changes only the lines it means to.
func Corpus() ([]Baseline, error) {
	corpusOnce.Do(func() { corpus, corpusErr = loadCorpus() })
	return corpus, corpusErr
}

func loadCorpus() ([]Baseline, error) {
	var out []Baseline
	err := fs.WalkDir(corpusFS, "corpus", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := corpusFS.ReadFile(p)
		if err != nil {
			return err
		}
		base := strings.TrimSuffix(path.Base(p), path.Ext(p))
		switch {
		case strings.HasPrefix(p, "corpus/k8s/"):
			docs, err := parseYAMLDocs(b)
			if err != nil {
				return fmt.Errorf("corpus %s: %w", p, err)
			}
			if b, err = renderYAML(docs); err != nil {
				return fmt.Errorf("corpus %s: %w", p, err)
			}
			out = append(out, Baseline{Name: "k8s/" + base, Fixture: FixtureK8s, Path: "manifests/" + base + ".yaml", Content: b})
		case strings.HasPrefix(p, "corpus/tf/"):
			out = append(out, Baseline{Name: "tf/" + base, Fixture: FixtureTF, Path: "infra/" + base + "/main.tf", Content: b})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
