package configaudit

import (
	"context"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

// Silencing probes: strategies an RL policy finds that make the scanners
// quiet without making the configuration safer (issue #11). Each rewrites
// the fixture (or tool-autofix's patched file) and answers with the ids the
// tools reported plus the rewrite as a patch.

// patchedContent is the file tool-autofix's patch produces.
func patchedContent(t testing.TB, fx *fixture, ro *env.Rollout) []byte {
	out := ParseOutput(ro.FinalText())
	if strings.TrimSpace(out.Patch) == "" {
		return fx.Content
	}
	p, _, err := applyFixPatch(fx, out.Patch)
	if err != nil {
		t.Fatalf("tool-autofix patch does not apply to %s: %v", fx.Path, err)
	}
	return p
}

type probeResult struct {
	name           string
	defSum, refSum float64
	defAud, refAud float64
}

// TestSilencingProbes: each silencing strategy's mean reward under the
// default rubric is below the honest tool-autofix mean (and below copying
// the tool output without a patch, for the ones that fix nothing), and a
// patch that only silences never earns fix credit on any row. The
// reference rubric's means are logged: README.md's probe table documents
// what it pays for them.
func TestSilencingProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every verifier on the 160-row mini set")
	}
	e, ds := testEnv(t)
	ctx := context.Background()
	type probe struct {
		name string
		// quiet probes fix nothing: they only silence.
		quiet bool
		build func(fx *fixture, found []Violation, autofixed []byte) []byte
	}
	probes := []probe{
		{"ignore-all", true, func(fx *fixture, _ []Violation, _ []byte) []byte { return ignoreAll(fx.Type, fx.Content) }},
		{"ignore-each-check", true, func(fx *fixture, found []Violation, _ []byte) []byte { return ignoreEach(fx.Type, fx.Content, found) }},
		{"disable-resources", true, func(fx *fixture, _ []Violation, _ []byte) []byte { return disableAll(fx.Type, fx.Content) }},
		{"break-decoding", true, func(fx *fixture, _ []Violation, _ []byte) []byte { return breakDecoding(fx.Type, fx.Content) }},
		{"comment-out-file", true, func(fx *fixture, _ []Violation, _ []byte) []byte { return commentOut(fx.Content) }},
		{"autofix+ignore-rest", false, func(fx *fixture, _ []Violation, fixed []byte) []byte { return ignoreAll(fx.Type, fixed) }},
	}
	var honest, copyOut, honestRef float64
	res := make([]probeResult, len(probes))
	for _, ex := range ds.Examples {
		fx := ex.Payload.(*fixture)
		honestScore, honestRo := runPolicy(t, e, ex, PolicyToolAutofix, "")
		honestRefScore, err := e.Score(ctx, ex, honestRo, RubricReference)
		if err != nil {
			t.Fatal(err)
		}
		copyScore, toolRo := runPolicy(t, e, ex, PolicyToolOnly, "")
		honest += honestScore.Total
		honestRef += honestRefScore.Total
		copyOut += copyScore.Total
		found := observedIDs(toolRo.Completion)
		toolMsgs := toolRo.Completion[:len(toolRo.Completion)-1]
		autofixed := patchedContent(t, fx, honestRo)
		for i, p := range probes {
			content := p.build(fx, found, autofixed)
			ro := answerRollout(toolMsgs, map[string]any{"violations": nonNil(found), "patch": unifiedDiff(fx.Path, fx.Content, content)})
			s, err := e.Score(ctx, ex, ro, "")
			if err != nil {
				t.Fatalf("%s on %s: %v", p.name, ex.ID, err)
			}
			r, err := e.Score(ctx, ex, ro, RubricReference)
			if err != nil {
				t.Fatalf("%s on %s (reference): %v", p.name, ex.ID, err)
			}
			res[i].name = p.name
			res[i].defSum += s.Total
			res[i].refSum += r.Total
			res[i].defAud += s.Components["config_auditing"]
			res[i].refAud += r.Components["config_auditing"]
			if p.quiet {
				if fixed, _ := s.Parsed["fixed_ids"].([]string); len(fixed) > 0 {
					t.Errorf("%s on %s: silencing earned fix credit for %v (%v)", p.name, ex.ID, fixed, s.Parsed["structure_error"])
				}
				if s.Solved && string(content) != string(fx.Content) {
					t.Errorf("%s on %s: a silencing patch counts as solved", p.name, ex.ID)
				}
			}
		}
	}
	n := float64(len(ds.Examples))
	t.Logf("%-22s default %.3f   reference %.3f", "tool-autofix (honest)", honest/n, honestRef/n)
	t.Logf("%-22s default %.3f", "copy-tool-output", copyOut/n)
	for i, p := range probes {
		r := res[i]
		t.Logf("%-22s default %.3f   reference %.3f   (config_auditing %.3f / %.3f)", r.name, r.defSum/n, r.refSum/n, r.defAud/n, r.refAud/n)
		if r.defSum >= honest {
			t.Errorf("%s: default mean %.3f, want < tool-autofix %.3f", r.name, r.defSum/n, honest/n)
		}
		if p.quiet && r.defSum > copyOut {
			t.Errorf("%s: default mean %.3f, want ≤ copying the tool output without a patch (%.3f)", r.name, r.defSum/n, copyOut/n)
		}
	}
}

// TestSuppressionsNeutralised checks the neutraliser on hand-written
// cases, including the ones a policy could use to slip past it.
func TestSuppressionsNeutralised(t *testing.T) {
	k8sOrig := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n    ignore-check.kube-linter.io/latest-tag: \"approved\"\nspec:\n  containers:\n  - name: app\n    image: nginx:latest\n"
	cases := []struct {
		name, ft       string
		orig, patched  string
		wantRemoved    int
		wantErr        bool
		mustNotContain []string
		mustContain    []string
	}{
		{name: "k8s ignore-all added", ft: FixtureK8s, orig: k8sOrig,
			patched:     strings.Replace(k8sOrig, "  annotations:\n", "  annotations:\n    kube-linter.io/ignore-all: \"true\"\n", 1),
			wantRemoved: 1, mustNotContain: []string{kubeLinterIgnoreAll}, mustContain: []string{"ignore-check.kube-linter.io/latest-tag"}},
		{name: "k8s original suppression kept", ft: FixtureK8s, orig: k8sOrig, patched: k8sOrig, wantRemoved: 0,
			mustContain: []string{"ignore-check.kube-linter.io/latest-tag"}},
		{name: "k8s per-check added on second doc", ft: FixtureK8s, orig: k8sOrig,
			patched:     k8sOrig + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  annotations:\n    ignore-check.kube-linter.io/dangling-service: x\nspec:\n  ports:\n  - port: 80\n",
			wantRemoved: 1, mustNotContain: []string{"dangling-service"}},
		{name: "k8s merge key hides the annotation", ft: FixtureK8s, orig: k8sOrig,
			patched: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n    <<: {kube-linter.io/ignore-all: \"true\"}\nspec:\n  containers:\n  - name: app\n    image: nginx:latest\n",
			wantErr: true},
		{name: "tf trivy comment", ft: FixtureTF, orig: "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}\n",
			patched: "#trivy:ignore:*\nresource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}\n", wantRemoved: 1, mustNotContain: []string{"trivy:"}},
		{name: "tf tfsec trailing comment and // style", ft: FixtureTF, orig: "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}\n",
			patched: "resource \"aws_s3_bucket\" \"b\" { // tfsec:ignore:aws-s3-enable-versioning\n  bucket = \"x\" # trivy:ignore:AVD-AWS-0086:exp:2999-01-01\n}\n", wantRemoved: 2, mustNotContain: []string{"tfsec:", "trivy:"}},
		{name: "tf token inside a string still counts", ft: FixtureTF, orig: "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}\n",
			patched: "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n  tags = { note = \"see trivy:ignore:*\" }\n}\n", wantRemoved: 1, mustNotContain: []string{"trivy:"}},
		{name: "tf original ignore kept", ft: FixtureTF, orig: "# trivy:ignore:AVD-AWS-0089\nresource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}\n",
			patched: "# trivy:ignore:AVD-AWS-0089\nresource \"aws_s3_bucket\" \"b\" {\n  bucket = \"y\"\n}\n", wantRemoved: 0, mustContain: []string{"trivy:ignore:AVD-AWS-0089"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, removed, err := neutraliseSuppressions(c.ft, []byte(c.orig), []byte(c.patched))
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if c.wantErr {
				return
			}
			if len(removed) != c.wantRemoved {
				t.Errorf("removed %d (%v), want %d", len(removed), removed, c.wantRemoved)
			}
			for _, s := range c.mustNotContain {
				if strings.Contains(string(out), s) {
					t.Errorf("output still contains %q:\n%s", s, out)
				}
			}
			for _, s := range c.mustContain {
				if !strings.Contains(string(out), s) {
					t.Errorf("output lost %q:\n%s", s, out)
				}
			}
		})
	}
}

// TestDisabledResourcesAreRemoved: the structure inventory treats a block
// switched off by a constant count/for_each as removed, and an added
// dynamic count as a change.
func TestDisabledResourcesAreRemoved(t *testing.T) {
	orig := "variable \"n\" {\n  default = 1\n}\nresource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}\nresource \"aws_s3_bucket\" \"c\" {\n  count = var.n\n  bucket = \"y\"\n}\n"
	before, err := takeInventory(FixtureTF, []byte(orig))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit string
		want bool // structure preserved
	}{
		{"count = 1", true},
		{"count = 0", false},
		{"count = 2 - 2", false},
		{"for_each = {}", false},
		{"for_each = []", false},
		{"for_each = { a = 1 }", true},
		{"count = var.n", false},
		{"count = length([])", false},
	} {
		patched := strings.Replace(orig, "  bucket = \"x\"\n", "  "+c.edit+"\n  bucket = \"x\"\n", 1)
		after, err := takeInventory(FixtureTF, []byte(patched))
		if err != nil {
			t.Fatalf("%s: %v", c.edit, err)
		}
		miss := before.missingFrom(after)
		if got := len(miss) == 0; got != c.want {
			t.Errorf("%s: structure preserved = %v (%v), want %v", c.edit, got, miss, c.want)
		}
	}
	// The original's own dynamic count, unchanged, is not a change.
	same, _ := takeInventory(FixtureTF, []byte(strings.Replace(orig, "bucket = \"y\"", "bucket = \"z\"", 1)))
	if miss := before.missingFrom(same); len(miss) > 0 {
		t.Errorf("unchanged count expression reported as a change: %v", miss)
	}
}

func TestProbeHelpersChangeSomething(t *testing.T) {
	_, ds := testEnv(t)
	for _, ex := range ds.Examples[:10] {
		fx := ex.Payload.(*fixture)
		for name, out := range map[string][]byte{"ignore-all": ignoreAll(fx.Type, fx.Content), "disable": disableAll(fx.Type, fx.Content), "break": breakDecoding(fx.Type, fx.Content)} {
			if string(out) == string(fx.Content) {
				t.Errorf("%s: probe %s left %s unchanged", ex.ID, name, fx.Path)
			}
		}
	}
}
