package policypack

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/svbench/svbench/verify"
)

// Bounds on a pack directory.
const (
	MaxPackFiles = 128
	MaxPackBytes = 4 << 20
)

// Clause is one clause of a pack: what the model sees (number, id, text) and
// the hidden metadata.
type Clause struct {
	Number     int             `json:"number"`
	ID         string          `json:"id"`
	Text       string          `json:"text"`
	Type       ClauseType      `json:"type"`
	Severity   verify.Severity `json:"severity"`
	ScannerIDs []string        `json:"scanner_ids,omitempty"`
}

// Pack is a loaded, validated policy pack. It is immutable and safe for
// concurrent use.
type Pack struct {
	id, title, fixtureType, description string
	scopeTags                           []string
	document                            string
	clauses                             []Clause
	index                               map[string]int
	query                               rego.PreparedEvalQuery
	modules                             map[string]*ast.Module
	tests                               map[string]*ast.Module
	gen                                 *genSpec
	source                              string
}

// ID is the pack's id (pack.json).
func (p *Pack) ID() string { return p.id }

// Title is the document's title.
func (p *Pack) Title() string { return p.title }

// FixtureType is FixtureK8s or FixtureTerraform.
func (p *Pack) FixtureType() string { return p.fixtureType }

// Source is the directory the pack was loaded from ("embedded:<id>" for
// the embedded packs).
func (p *Pack) Source() string { return p.source }

// Document is policy.md as the model sees it.
func (p *Pack) Document() string { return p.document }

// Clauses lists the clauses in document order.
func (p *Pack) Clauses() []Clause {
	out := make([]Clause, len(p.clauses))
	for i, c := range p.clauses {
		c.ScannerIDs = append([]string(nil), c.ScannerIDs...)
		out[i] = c
	}
	return out
}

// Clause returns one clause by id.
func (p *Pack) Clause(id string) (Clause, bool) {
	i, ok := p.index[id]
	if !ok {
		return Clause{}, false
	}
	c := p.clauses[i]
	c.ScannerIDs = append([]string(nil), c.ScannerIDs...)
	return c, true
}

// ClauseIDs lists the clause ids in document order.
func (p *Pack) ClauseIDs() []string {
	out := make([]string, len(p.clauses))
	for i, c := range p.clauses {
		out[i] = c.ID
	}
	return out
}

// HasGenerator reports whether the pack ships bases and mutations.
func (p *Pack) HasGenerator() bool { return p.gen != nil }

// LoadDir loads and validates the pack in dir (see the package
// documentation for the layout). Every problem is reported with the file
// and, where there is one, the line.
func LoadDir(dir string) (*Pack, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("policypack: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("policypack: %s is not a directory; a policy pack is a directory holding policy.md, pack.json and *.rego", dir)
	}
	p, err := loadFS(context.Background(), os.DirFS(dir), dir, loadOptions{checkGenerator: true})
	if err != nil {
		return nil, fmt.Errorf("policypack %s: %w", dir, err)
	}
	return p, nil
}

// packFiles is a pack directory read into memory.
type packFiles struct {
	document, meta, generator []byte
	hasGenerator              bool
	rego, tests               []regoFile
	other                     map[string][]byte // bases/… and anything the generator reads
}

func readPack(fsys fs.FS, label string) (*packFiles, error) {
	pf := &packFiles{other: map[string][]byte{}}
	var n, total int
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: symbolic links are not followed in a policy pack", path.Join(label, p))
		}
		n++
		if n > MaxPackFiles {
			return fmt.Errorf("more than %d files", MaxPackFiles)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		total += len(b)
		if total > MaxPackBytes {
			return fmt.Errorf("more than %d bytes in total", MaxPackBytes)
		}
		name := path.Join(label, p)
		switch {
		case p == "policy.md":
			pf.document = b
		case p == "pack.json":
			pf.meta = b
		case p == "generator.json":
			pf.generator, pf.hasGenerator = b, true
		case strings.HasSuffix(p, "_test.rego"):
			pf.tests = append(pf.tests, regoFile{Name: name, Src: b})
		case strings.HasSuffix(p, ".rego"):
			pf.rego = append(pf.rego, regoFile{Name: name, Src: b})
		default:
			pf.other[p] = b
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case pf.document == nil:
		return nil, fmt.Errorf("no policy.md: a pack needs the policy document the model reads")
	case pf.meta == nil:
		return nil, fmt.Errorf("no pack.json: a pack needs its metadata (id, title, fixture_type, clauses)")
	case len(pf.rego) == 0:
		return nil, fmt.Errorf("no .rego files: a pack needs the Rego implementing its clauses")
	case len(pf.rego)+len(pf.tests) > MaxRegoFiles:
		return nil, fmt.Errorf("%d Rego files, over the limit of %d", len(pf.rego)+len(pf.tests), MaxRegoFiles)
	}
	return pf, nil
}

// loadOptions select the costlier checks.
type loadOptions struct {
	// checkGenerator runs every generator mutation through the Rego. The
	// embedded packs skip it at start-up; TestEmbeddedPacksValid runs it.
	checkGenerator bool
}

// loadFS loads a pack from fsys; label prefixes file names in errors.
func loadFS(ctx context.Context, fsys fs.FS, label string, opts loadOptions) (*Pack, error) {
	pf, err := readPack(fsys, label)
	if err != nil {
		return nil, err
	}
	docName, metaName := path.Join(label, "policy.md"), path.Join(label, "pack.json")
	doc, err := ParseDocument(docName, string(pf.document))
	if err != nil {
		return nil, err
	}
	m, err := parseMeta(metaName, pf.meta)
	if err != nil {
		return nil, err
	}
	if err := matchDocMeta(doc, m, docName, metaName); err != nil {
		return nil, err
	}
	p := &Pack{
		id: m.ID, title: doc.Title, fixtureType: m.FixtureType, description: m.Description, scopeTags: m.ScopeTags,
		document: string(pf.document), index: map[string]int{}, source: label,
		modules: map[string]*ast.Module{}, tests: map[string]*ast.Module{},
	}
	for i, dc := range doc.Clauses {
		mc := m.Clauses[i]
		p.clauses = append(p.clauses, Clause{Number: dc.Number, ID: dc.ID, Text: dc.Text, Type: mc.Type, Severity: mc.severity(), ScannerIDs: mc.ScannerIDs})
		p.index[dc.ID] = i
	}
	for _, f := range pf.rego {
		mod, err := parseRego(f)
		if err != nil {
			return nil, err
		}
		p.modules[f.Name] = mod
	}
	for _, f := range pf.tests {
		mod, err := parseRego(f)
		if err != nil {
			return nil, err
		}
		p.tests[f.Name] = mod
	}
	if _, p.query, err = compileRego(ctx, p.modules); err != nil {
		return nil, err
	}
	if err := checkClauseCoverage(doc, p.modules); err != nil {
		return nil, err
	}
	if err := p.runRegoTests(ctx); err != nil {
		return nil, err
	}
	if pf.hasGenerator {
		if p.gen, err = parseGenSpec(path.Join(label, "generator.json"), pf.generator, pf.other, p); err != nil {
			return nil, err
		}
		if opts.checkGenerator {
			if err := p.checkGenerator(ctx); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// matchDocMeta checks that policy.md and pack.json describe the same
// clauses in the same order under the same title.
func matchDocMeta(doc Document, m meta, docName, metaName string) error {
	if strings.TrimSpace(m.Title) != doc.Title {
		return fmt.Errorf("%s title %q differs from %s title %q", metaName, m.Title, docName, doc.Title)
	}
	inMeta := map[string]bool{}
	for _, c := range m.Clauses {
		inMeta[c.ID] = true
	}
	inDoc := map[string]bool{}
	var problems []string
	for _, c := range doc.Clauses {
		inDoc[c.ID] = true
		if !inMeta[c.ID] {
			problems = append(problems, fmt.Sprintf("clause %s (%s:%d) is missing from %s", c.ID, docName, c.Line, metaName))
		}
	}
	for _, c := range m.Clauses {
		if !inDoc[c.ID] {
			problems = append(problems, fmt.Sprintf("clause %s in %s is not in %s", c.ID, metaName, docName))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("policy.md and pack.json disagree: %s", strings.Join(problems, "; "))
	}
	for i, c := range doc.Clauses {
		if m.Clauses[i].ID != c.ID {
			return fmt.Errorf("policy.md and pack.json list the clauses in a different order: clause %d is %s in %s and %s in %s", i+1, c.ID, docName, m.Clauses[i].ID, metaName)
		}
	}
	return nil
}

// ClausesForScannerID lists, in document order, the clauses whose
// scanner_ids include a tool-qualified scanner id ("trivy/AVD-AWS-0086"):
// the nearest clauses a scanner finding maps to, as a probe that copies the
// scanners and relabels their findings would map them.
func (p *Pack) ClausesForScannerID(id string) []string {
	var out []string
	for _, c := range p.clauses {
		for _, s := range c.ScannerIDs {
			if s == id {
				out = append(out, c.ID)
				break
			}
		}
	}
	return out
}
