package configaudit

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/kubelint"
	"github.com/svbench/svbench/verify/policy"
	"github.com/svbench/svbench/verify/suite"
	"github.com/svbench/svbench/verify/tfscan"
)

// Tool names as the verifiers report them (Finding.Tool).
const (
	ToolKubeLinter = "kube-linter"
	ToolTrivy      = "trivy"
	ToolOPA        = "opa"
)

// verifiers runs the three scanners and memoises their findings per content
// hash: the oracle merge, tool calls and re-verification of identical patched
// files would otherwise rescan the same bytes.
type verifiers struct {
	kube  *kubelint.Linter
	trivy *tfscan.Scanner
	opa   *policy.Engine

	mu    sync.Mutex
	cache map[cacheKey]scanResult
	// noCache re-verifies every patched file even when the same bytes were
	// seen before (benchmarks measure verification, not the memo).
	noCache bool
}

type cacheKey struct{ tool, hash string }

type scanResult struct {
	findings []verify.Finding
	note     string // e.g. documents skipped as non-Kubernetes
	// unjudged lists the documents kube-linter could not judge: ones that
	// fail typed decoding (skipped) and ones of a kind or apiVersion it
	// does not know (decoded unstructured, most checks silent).
	unjudged []string
	err      error
}

const maxCacheEntries = 20000

func newVerifiers(ctx context.Context, policyDirs []string) (*verifiers, error) {
	// The configuration `svbench verify` runs too (suite.ScoringOptions):
	// what verify calls clean, E2 pays as clean.
	s, err := suite.New(ctx, suite.ScoringOptions(policyDirs))
	if err != nil {
		return nil, err
	}
	return &verifiers{kube: s.KubeLinter(), trivy: s.Trivy(), opa: s.Policy(), cache: map[cacheKey]scanResult{}}, nil
}

func (v *verifiers) versions() map[string]string {
	return map[string]string{ToolKubeLinter: v.kube.Version(), ToolTrivy: v.trivy.Version(), ToolOPA: v.opa.Version()}
}

// toolsFor lists the verifiers that apply to a fixture type; the first is
// the reference's "primary" tool.
func toolsFor(fixtureType string) []string {
	if fixtureType == FixtureTF {
		return []string{ToolTrivy, ToolOPA}
	}
	return []string{ToolKubeLinter, ToolOPA}
}

func primaryTool(fixtureType string) string { return toolsFor(fixtureType)[0] }

// scan runs one tool on one file, cached by content hash ("" = do not cache).
func (v *verifiers) scan(ctx context.Context, tool, fixtureType string, f verify.File, hash string) scanResult {
	if hash == "" {
		return v.scanUncached(ctx, tool, fixtureType, f)
	}
	key := cacheKey{tool + "\x00" + fixtureType + "\x00" + f.Path, hash}
	v.mu.Lock()
	r, ok := v.cache[key]
	v.mu.Unlock()
	if ok {
		return r
	}
	r = v.scanUncached(ctx, tool, fixtureType, f)
	if ctx.Err() != nil {
		return r // a cancelled scan says nothing about the file
	}
	v.mu.Lock()
	if len(v.cache) >= maxCacheEntries {
		clear(v.cache)
	}
	v.cache[key] = r
	v.mu.Unlock()
	return r
}

func (v *verifiers) scanUncached(ctx context.Context, tool, fixtureType string, f verify.File) scanResult {
	files := []verify.File{f}
	switch {
	case tool == ToolKubeLinter && fixtureType == FixtureK8s:
		res, err := v.kube.Lint(ctx, files)
		r := scanResult{findings: res.Findings, err: err}
		for _, d := range append(append([]kubelint.Invalid(nil), res.Invalid...), res.Untyped...) {
			r.unjudged = append(r.unjudged, fmt.Sprintf("line %d: %v", d.Line, d.Err))
		}
		if err == nil && len(res.Invalid) > 0 {
			r.note = fmt.Sprintf("%d document(s) skipped: not Kubernetes objects kube-linter can decode (first at line %d: %v)", len(res.Invalid), res.Invalid[0].Line, res.Invalid[0].Err)
			if res.Objects == 0 {
				r.err = fmt.Errorf("no Kubernetes objects found: %s", r.note)
			}
		}
		return r
	case tool == ToolTrivy && fixtureType == FixtureTF:
		// trivy only reads .tf files; the fixture path decides nothing here.
		name := f.Path
		if !strings.HasSuffix(name, ".tf") {
			name += ".tf"
		}
		fs, err := v.trivy.Verify(ctx, []verify.File{{Path: name, Content: f.Content}})
		for i := range fs {
			fs[i].File = f.Path
		}
		return scanResult{findings: fs, err: err}
	case tool == ToolOPA && fixtureType == FixtureK8s:
		fs, err := v.opa.VerifyKubernetes(ctx, files)
		return scanResult{findings: fs, err: err}
	case tool == ToolOPA && fixtureType == FixtureTF:
		fs, err := v.opa.VerifyTerraform(ctx, files)
		return scanResult{findings: fs, err: err}
	}
	return scanResult{err: fmt.Errorf("%s does not scan %s files", tool, fixtureName(fixtureType))}
}

func fixtureName(t string) string {
	if t == FixtureTF {
		return "Terraform"
	}
	return "Kubernetes YAML"
}

// all runs every applicable tool; the first error is returned alongside the
// findings of the tools that worked.
func (v *verifiers) all(ctx context.Context, fixtureType string, f verify.File, hash string) ([]verify.Finding, error) {
	fs, _, err := v.judge(ctx, fixtureType, f, hash)
	return fs, err
}

// judge is all plus the documents a verifier could not judge (see
// scanResult.unjudged).
func (v *verifiers) judge(ctx context.Context, fixtureType string, f verify.File, hash string) ([]verify.Finding, []string, error) {
	var out []verify.Finding
	var unjudged []string
	var firstErr error
	for _, t := range toolsFor(fixtureType) {
		r := v.scan(ctx, t, fixtureType, f, hash)
		if r.err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", t, r.err)
		}
		out = append(out, r.findings...)
		unjudged = append(unjudged, r.unjudged...)
	}
	return out, unjudged, firstErr
}

func findingViolations(fs []verify.Finding) []Violation {
	out := make([]Violation, 0, len(fs))
	for _, f := range fs {
		out = append(out, Violation{ID: f.ID(), Severity: f.Severity})
	}
	return out
}
