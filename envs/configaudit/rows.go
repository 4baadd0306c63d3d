package configaudit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/configaudit/policypack"
	"github.com/svbench/svbench/verify"
)

// MaxFixtureBytes bounds one configuration file in a dataset row; larger
// fixtures are rejected with a row error rather than handed to the verifiers.
const MaxFixtureBytes = 2 << 20

// Row is svbench's own E2 dataset row: the configuration inline, the
// injected mutations and the expected findings.
type Row struct {
	ID          string         `json:"id"`
	FixtureType string         `json:"fixture_type"`
	Path        string         `json:"path"`
	Content     string         `json:"content"`
	Labels      Labels         `json:"labels"`
	Meta        map[string]any `json:"meta,omitempty"`
	// PolicyPack names the organisation policy the row is audited against
	// (mode=policy); Compliant is the configuration with the policy's
	// violations undone, when the generator knows it.
	PolicyPack string `json:"policy_pack,omitempty"`
	Compliant  string `json:"compliant,omitempty"`
}

// Labels are the row's ground truth. Mutations name what the generator
// injected; Expected is the union of the mutations' mapped finding ids (for
// imported manifests: the verifiers' findings at build time).
type Labels struct {
	Mutations []string    `json:"mutations"`
	Expected  []Violation `json:"expected"`
	// Source says where Expected came from: "mutations" or "verifiers".
	Source string `json:"source,omitempty"`
}

// Answer is the JSON stored in Example.Answer, the reference's object plus
// svbench's extras, so `svbench score` rows round-trip.
type Answer struct {
	Oracle      []Violation `json:"oracle"`
	FixtureType string      `json:"fixture_type"`
	FixturePath string      `json:"fixture_path,omitempty"`
	Mutations   []string    `json:"mutations,omitempty"`
	PolicyPack  string      `json:"policy_pack,omitempty"`
}

// fixture is the decoded example the environment scores against.
type fixture struct {
	Type      string
	Path      string
	Content   []byte
	Oracle    []Violation
	Mutations []string
	// Hash keys the verifier cache.
	Hash string
	// Pack is the organisation policy of the policy condition (nil in the
	// standard condition); its verdict on the original is computed once.
	Pack     *policypack.Pack
	polOnce  sync.Once
	polTruth []Violation
	polRaw   []policypack.Violation
	polErr   error

	invOnce sync.Once
	inv     inventory
	invErr  error
}

// inventory of the original, computed once per example: every rollout's
// patch is checked against it.
func (fx *fixture) inventory() (inventory, error) {
	fx.invOnce.Do(func() { fx.inv, fx.invErr = takeInventory(fx.Type, fx.Content) })
	return fx.inv, fx.invErr
}

func contentHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fixtureTypeFor guesses the type from a path: .tf/.tf.json are Terraform.
func fixtureTypeFor(p string) string {
	if strings.HasSuffix(p, ".tf") || strings.HasSuffix(p, ".tf.json") {
		return FixtureTF
	}
	return FixtureK8s
}

func normFixtureType(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "k8s", "kubernetes", "yaml":
		return FixtureK8s, true
	case "tf", "terraform", "hcl":
		return FixtureTF, true
	}
	return "", false
}

// rawRow is the union of every accepted row shape: svbench's Row, the
// reference's {question, info{violations}, meta} and score rows carrying
// {answer: {oracle, fixture_type, fixture_path}} with a prompt or question.
type rawRow struct {
	ID          json.RawMessage `json:"id"`
	FixtureType string          `json:"fixture_type"`
	Path        string          `json:"path"`
	Content     *string         `json:"content"`
	Labels      *Labels         `json:"labels"`
	Meta        map[string]any  `json:"meta"`
	Question    *string         `json:"question"`
	Info        *struct {
		Violations []struct {
			Tool     string `json:"tool"`
			RuleID   string `json:"rule_id"`
			Severity string `json:"severity"`
		} `json:"violations"`
	} `json:"info"`
	Answer     json.RawMessage `json:"answer"`
	Prompt     json.RawMessage `json:"prompt"`
	PolicyPack string          `json:"policy_pack"`
	Compliant  *string         `json:"compliant"`
}

type rawViolation struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
}

func parseViolations(field string, raw []rawViolation) ([]Violation, error) {
	out := make([]Violation, 0, len(raw))
	for i, r := range raw {
		if strings.TrimSpace(r.ID) == "" {
			return nil, dataset.FieldError(fmt.Sprintf("%s[%d].id", field, i), "is empty; each violation needs a tool-qualified id such as \"kube-linter/run-as-non-root\"")
		}
		out = append(out, Violation{ID: strings.TrimSpace(r.ID), Severity: normSeverity(r.Severity)})
	}
	return out, nil
}

// parseRow decodes one dataset row of any accepted shape.
func parseRow(raw json.RawMessage) (Row, error) {
	var r rawRow
	if err := json.Unmarshal(raw, &r); err != nil {
		return Row{}, dataset.FieldError("", "does not match the E2 row format: %v", err)
	}
	row := Row{Meta: r.Meta, FixtureType: r.FixtureType, Path: r.Path, PolicyPack: strings.TrimSpace(r.PolicyPack)}
	if r.Compliant != nil {
		row.Compliant = *r.Compliant
	}
	if len(r.ID) > 0 && string(r.ID) != "null" {
		var s string
		if json.Unmarshal(r.ID, &s) == nil {
			row.ID = s
		} else {
			row.ID = strings.Trim(string(r.ID), `"`)
		}
	}
	var ans *Answer
	if len(r.Answer) > 0 && string(r.Answer) != "null" {
		a, err := parseAnswer(r.Answer)
		if err != nil {
			return Row{}, err
		}
		ans = &a
	}
	switch {
	case r.Content != nil:
		row.Content = *r.Content
	case r.Question != nil:
		row.Content = *r.Question
	case len(r.Prompt) > 0:
		var c env.Completion
		if err := json.Unmarshal(r.Prompt, &c); err != nil {
			return Row{}, dataset.FieldError("prompt", "is neither a string nor a list of messages: %v", err)
		}
		for i := len(c.Messages) - 1; i >= 0; i-- {
			if c.Messages[i].Role == env.RoleUser {
				row.Content = c.Messages[i].Content
				break
			}
		}
	case ans != nil && ans.FixturePath != "":
		b, err := readFixture(ans.FixturePath)
		if err != nil {
			return Row{}, dataset.FieldError("answer.fixture_path", "%v; put the configuration inline in \"content\" or \"question\" instead", err)
		}
		row.Content = string(b)
	default:
		return Row{}, dataset.FieldError("content", "is missing; give the configuration text in \"content\" (svbench rows) or \"question\" (reference rows)")
	}
	// A prompt written by this environment starts with "File path: <p>";
	// the path line is not part of the configuration.
	if p, body, ok := splitPathHeader(row.Content); ok {
		// A reference row: the configuration is in the prompt's fence and
		// the path is the reference's own, possibly absolute (trainer.go).
		if cfg, isRef := referenceConfig(body); isRef {
			p, body = relativeFixturePath(p), cfg
		}
		if row.Path == "" {
			row.Path = p
		}
		row.Content = body
	}
	switch {
	case r.Labels != nil:
		row.Labels = *r.Labels
		for i, v := range row.Labels.Expected {
			if strings.TrimSpace(v.ID) == "" {
				return Row{}, dataset.FieldError(fmt.Sprintf("labels.expected[%d].id", i), "is empty; each expected finding needs a tool-qualified id such as \"kube-linter/run-as-non-root\"")
			}
			row.Labels.Expected[i].Severity = normSeverity(string(v.Severity))
		}
	case r.Info != nil:
		for i, v := range r.Info.Violations {
			if v.Tool == "" || v.RuleID == "" {
				return Row{}, dataset.FieldError(fmt.Sprintf("info.violations[%d]", i), "needs both \"tool\" and \"rule_id\"")
			}
			row.Labels.Expected = append(row.Labels.Expected, Violation{ID: v.Tool + "/" + v.RuleID, Severity: normSeverity(v.Severity)})
		}
		row.Labels.Source = "reference"
	case ans != nil:
		row.Labels.Expected = ans.Oracle
		row.Labels.Mutations = ans.Mutations
		row.Labels.Source = "answer"
	default:
		return Row{}, dataset.FieldError("labels", "is missing; give \"labels\" (svbench rows), \"info.violations\" (reference rows) or \"answer.oracle\"")
	}
	if ans != nil {
		if row.PolicyPack == "" {
			row.PolicyPack = ans.PolicyPack
		}
		if row.FixtureType == "" {
			row.FixtureType = ans.FixtureType
		}
		if row.Path == "" {
			row.Path = relativeFixturePath(ans.FixturePath)
		}
	}
	if row.Path == "" && r.Meta != nil {
		if src, ok := r.Meta["source"].(string); ok {
			row.Path = src
		}
	}
	if row.FixtureType == "" && r.Meta != nil {
		if lang, ok := r.Meta["lang"].(string); ok {
			row.FixtureType = lang
		}
	}
	if row.FixtureType == "" {
		row.FixtureType = fixtureTypeFor(row.Path)
	}
	ft, ok := normFixtureType(row.FixtureType)
	if !ok {
		return Row{}, dataset.FieldError("fixture_type", "is %q; use \"k8s\" or \"tf\"", row.FixtureType)
	}
	row.FixtureType = ft
	if row.Path == "" {
		row.Path = "config.yaml"
		if ft == FixtureTF {
			row.Path = "main.tf"
		}
	}
	if err := checkPath(row.Path); err != nil {
		return Row{}, dataset.FieldError("path", "%v", err)
	}
	if len(row.Content) > MaxFixtureBytes || len(row.Compliant) > MaxFixtureBytes {
		return Row{}, dataset.FieldError("content", "is %d bytes, over the %d-byte limit for one configuration file", len(row.Content), MaxFixtureBytes)
	}
	if !utf8.ValidString(row.Content) || strings.IndexByte(row.Content, 0) >= 0 {
		return Row{}, dataset.FieldError("content", "is not UTF-8 text (binary data?)")
	}
	if row.ID == "" {
		row.ID = "e2-" + contentHash([]byte(row.Path + "\x00" + row.Content))[:12]
	}
	return row, nil
}

func parseAnswer(raw json.RawMessage) (Answer, error) {
	var a struct {
		Oracle      []rawViolation `json:"oracle"`
		FixtureType string         `json:"fixture_type"`
		FixturePath string         `json:"fixture_path"`
		Mutations   []string       `json:"mutations"`
		PolicyPack  string         `json:"policy_pack"`
	}
	// Some harnesses store the answer as a JSON string holding the object.
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return Answer{}, dataset.FieldError("answer", "is not valid: %v", err)
		}
		raw = json.RawMessage(s)
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return Answer{}, dataset.FieldError("answer", "must be an object {\"oracle\": [{\"id\", \"severity\"}], \"fixture_type\": \"k8s\"|\"tf\"}: %v", err)
	}
	vs, err := parseViolations("answer.oracle", a.Oracle)
	if err != nil {
		return Answer{}, err
	}
	if a.FixtureType != "" {
		ft, ok := normFixtureType(a.FixtureType)
		if !ok {
			return Answer{}, dataset.FieldError("answer.fixture_type", "is %q; use \"k8s\" or \"tf\"", a.FixtureType)
		}
		a.FixtureType = ft
	}
	// The policy pack is read back so a recorded policy-condition example
	// (toExample writes it into the answer) is scored in that condition.
	return Answer{Oracle: vs, FixtureType: a.FixtureType, FixturePath: a.FixturePath, Mutations: a.Mutations, PolicyPack: strings.TrimSpace(a.PolicyPack)}, nil
}

func readFixture(p string) ([]byte, error) {
	// The path comes from the row: never follow it out of the working
	// directory (a trainer's row names a file inside the reference's
	// installed package; its configuration is in the prompt).
	if path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		return nil, fmt.Errorf("%q is not a clean relative path; svbench opens no absolute or parent path a row names", p)
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("cannot read the fixture: %w", err)
	}
	if st.Size() > MaxFixtureBytes {
		return nil, fmt.Errorf("fixture %s is %d bytes, over the %d-byte limit", p, st.Size(), MaxFixtureBytes)
	}
	return os.ReadFile(p)
}

func splitPathHeader(s string) (p, body string, ok bool) {
	const h = "File path: "
	if !strings.HasPrefix(s, h) {
		return "", s, false
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return "", s, false
	}
	p = strings.TrimSpace(s[len(h):nl])
	body = strings.TrimPrefix(s[nl+1:], "\n")
	return p, body, true
}

// checkPath accepts relative, clean, forward-slash paths: the path is shown
// to the model and is the only argument the tools accept.
func checkPath(p string) error {
	switch {
	case len(p) > 512:
		return fmt.Errorf("is longer than 512 bytes")
	case strings.ContainsAny(p, "\x00\n\r\\"):
		return fmt.Errorf("%q contains a control character or backslash", p)
	case path.IsAbs(p):
		return fmt.Errorf("%q is absolute; use a path relative to the repository root", p)
	case path.Clean(p) != p || p == "." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("%q is not a clean relative path", p)
	}
	return nil
}

// toExample turns a row into an Example with its prompt; pk is the row's
// policy pack in the policy condition (nil otherwise) and tools says
// whether the episode offers tools.
func (r Row) toExample(pk *policypack.Pack, tools bool) (env.Example, error) {
	oracle := dedupViolations(r.Labels.Expected)
	ans := Answer{Oracle: oracle, FixtureType: r.FixtureType, FixturePath: r.Path, Mutations: r.Labels.Mutations}
	system := SystemPrompt
	if pk != nil {
		ans.PolicyPack = pk.ID()
		system = policySystemPrompt(pk, tools)
	}
	if ans.Oracle == nil {
		ans.Oracle = []Violation{}
	}
	raw, err := json.Marshal(ans)
	if err != nil {
		return env.Example{}, err
	}
	meta := map[string]any{}
	for k, v := range r.Meta {
		meta[k] = v
	}
	meta["fixture_type"] = r.FixtureType
	meta["clean"] = len(oracle) == 0
	if pk != nil {
		meta["policy_pack"] = pk.ID()
	}
	content := []byte(r.Content)
	return env.Example{
		ID: r.ID,
		Prompt: []env.Message{
			{Role: env.RoleSystem, Content: system},
			{Role: env.RoleUser, Content: userPrompt(r.Path, r.Content)},
		},
		Answer: raw,
		Meta:   meta,
		Payload: &fixture{
			Type: r.FixtureType, Path: r.Path, Content: content,
			Oracle: oracle, Mutations: r.Labels.Mutations, Hash: contentHash(content), Pack: pk,
		},
	}, nil
}

func userPrompt(p, content string) string {
	return "File path: " + p + "\n\n" + content
}

// dedupViolations keeps the first severity per id and sorts by id.
func dedupViolations(vs []Violation) []Violation {
	seen := map[string]bool{}
	out := make([]Violation, 0, len(vs))
	for _, v := range vs {
		if v.ID == "" || seen[v.ID] {
			continue
		}
		seen[v.ID] = true
		if v.Severity == "" {
			v.Severity = verify.SeverityMed
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
