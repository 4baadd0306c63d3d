package configaudit

import (
	"encoding/json"
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"math"
	"strings"

	"github.com/svbench/svbench/extract"
	"github.com/svbench/svbench/verify/nesting"
)

// Bounds on the model's answer: it is hostile input.
const (
	MaxViolations = 200
	MaxIDLen      = 200
	MaxPatchBytes = 256 << 10
)

// SystemPrompt states the task and the output schema.
const SystemPrompt = `You are a cloud security engineer auditing one configuration file (Kubernetes YAML or Terraform).
Tools: run_kubelinter (Kubernetes), run_trivy (Terraform) and run_opa (policies, both types) take {"path": "<the file path given to you>"} and return JSON lists of findings {tool, rule_id, severity, message, file, start_line, end_line}. Call only the tools you need.
Report every security misconfiguration and propose a minimal fix. Answer with ONE JSON object and nothing else:
{"violations": [{"id": "<tool>/<rule_id>", "severity": "low|med|high"}], "patch": "<unified diff of the file, or a JSON Patch array as a string; empty if no fix>", "confidence": <0..1>}
Ids are tool-qualified as the tools report them, e.g. "kube-linter/run-as-non-root" or "trivy/AVD-AWS-0086". "medium" and "critical" are accepted for med and high.
A patch must keep every object, container, image and resource of the file: fix the settings, do not delete what is insecure. Report an empty violations list for a secure file.`

// SystemPromptNoTools replaces SystemPrompt when the tool budget is 0: the
// model audits by reading alone, which measures auditing skill rather than
// the ability to copy a scanner's output.
var SystemPromptNoTools = strings.Replace(SystemPrompt,
	SystemPrompt[strings.Index(SystemPrompt, "Tools:"):strings.Index(SystemPrompt, "Report every")],
	"You have no tools: read the file yourself and report what kube-linter (Kubernetes), trivy (Terraform) and svbench's OPA policies would report.\n", 1)

// OutputSchema is the JSON Schema of the answer, for Info.
var OutputSchema = json.RawMessage(`{"type":"object","required":["violations"],"properties":{"violations":{"type":"array","items":{"type":"object","required":["id","severity"],"properties":{"id":{"type":"string"},"severity":{"type":"string","enum":["low","med","high","medium","critical"]}}}},"patch":{"type":"string"},"confidence":{"type":"number","minimum":0,"maximum":1}}}`)

// Output is what the parser read from the final answer.
type Output struct {
	// JSON is true when an object with a "violations" list was found (the
	// reference's had_valid_json).
	JSON bool
	// SchemaValid additionally requires every item, the patch and the
	// confidence to have the documented types and ranges.
	SchemaValid bool
	Violations  []Violation
	Patch       string
	Confidence  float64
	Problems    []string
}

// ParseOutput reads the model's final text. It never fails: problems are
// recorded and make the output schema-invalid.
//
// The object is read as Python's json.loads reads it (extract.PyMap), so
// NaN, Infinity and -Infinity do not discard the answer. Both rubrics then
// treat such a value as an invalid value of its field: a confidence that is
// not a finite number in [0, 1] makes the output schema-invalid (format 0)
// and leaves Confidence at 0; in a violation or a patch it is a value of the
// wrong type. The violations themselves are scored as usual.
func ParseOutput(text string) Output {
	var o Output
	m, ok := extract.PyMap(text)
	if !ok {
		problem := "no JSON object in the answer"
		// encoding/json gives up at 10,000 levels without saying so; say
		// which bound an answer that deep is over (within what extract
		// reads, so a huge answer costs no more here than there).
		if err := nesting.JSON("answer", []byte(text[:min(len(text), extract.MaxInput)]), 0); err != nil {
			problem += ": " + err.Error()
		}
		o.Problems = append(o.Problems, problem)
		return o
	}
	rawList, ok := m["violations"].([]any)
	if !ok {
		o.Problems = append(o.Problems, `"violations" is missing or not a list`)
		return o
	}
	o.JSON, o.SchemaValid = true, true
	if len(rawList) > MaxViolations {
		o.Problems = append(o.Problems, fmt.Sprintf("%d violations listed; only the first %d are read", len(rawList), MaxViolations))
		o.SchemaValid = false
		rawList = rawList[:MaxViolations]
	}
	seen := map[string]bool{}
	for i, it := range rawList {
		obj, ok := it.(map[string]any)
		var id, sev string
		if ok {
			id, _ = obj["id"].(string)
			sev, _ = obj["severity"].(string)
		} else if s, isStr := it.(string); isStr {
			// A bare id is readable but off-schema.
			id = s
		}
		id = strings.TrimSpace(id)
		if id == "" || len(id) > MaxIDLen {
			o.Problems = append(o.Problems, fmt.Sprintf("violations[%d]: id missing or too long", i))
			o.SchemaValid = false
			continue
		}
		if !ok || !knownSeverity(sev) {
			o.SchemaValid = false
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		o.Violations = append(o.Violations, Violation{ID: id, Severity: normSeverity(sev)})
	}
	switch p := m["patch"].(type) {
	case nil:
	case string:
		if len(p) > MaxPatchBytes {
			o.Problems = append(o.Problems, fmt.Sprintf("patch is %d bytes, over the %d-byte limit; ignored", len(p), MaxPatchBytes))
			o.SchemaValid = false
		} else {
			o.Patch = p
		}
	case []any:
		// A JSON Patch given as an array rather than a string. An array
		// holding NaN or Infinity cannot be re-encoded: no patch. An empty
		// array changes nothing: no patch, as the prompt's empty string.
		b, err := json.Marshal(p)
		switch {
		case len(p) == 0:
		case err != nil:
			o.SchemaValid = false
			o.Problems = append(o.Problems, `"patch" array is not valid JSON (NaN or Infinity); ignored`)
		case len(b) > MaxPatchBytes:
			o.SchemaValid = false
			o.Problems = append(o.Problems, fmt.Sprintf("patch array is %d bytes, over the %d-byte limit; ignored", len(b), MaxPatchBytes))
		default:
			o.Patch = string(b)
		}
	default:
		o.SchemaValid = false
		o.Problems = append(o.Problems, `"patch" must be a string`)
	}
	if c, ok := m["confidence"]; ok {
		if f, ok := confidence(c); ok {
			o.Confidence = f
		} else {
			o.SchemaValid = false
			o.Problems = append(o.Problems, fmt.Sprintf(`"confidence" must be a finite number in [0, 1], got %s`, describe(c)))
		}
	}
	return o
}

// confidence accepts a finite JSON number in [0, 1]. NaN and the
// infinities fail: NaN compares false with both bounds, so it is rejected
// explicitly rather than by the range check.
func confidence(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1 {
		return 0, false
	}
	return f, true
}

// describe names a decoded JSON value for a problem message, briefly.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case extract.NonFinite:
		return x.String()
	case json.Number:
		return clip.Bytes(string(x), 32, clip.Ellipsis)
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	}
	return "an object"
}

func knownSeverity(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "low", "med", "medium", "high", "critical":
		return true
	}
	return false
}
