package redteam

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// Scenario kinds.
const (
	KindHarmful = "harmful"
	KindBenign  = "benign"
)

// Condition is one way into a simulated target: every cue present (as whole
// words in default mode, as substrings in reference mode) makes it comply.
// The field names are the reference's.
type Condition struct {
	Strategy       string   `json:"strategy"`
	Keywords       []string `json:"keywords"`
	NoveltyBonus   float64  `json:"novelty_bonus"`
	UnsafeOverride *string  `json:"unsafe_override"`
}

// Scenario is one row shared by E5 and E6. Its fields are a superset of
// the reference's E5 scenario and E6 row, so its fixtures load as they are;
// svbench's own rows add kind, category, pair, behavior, request and
// escalation. Shipped rows hold sanitised placeholders only: a harmful
// behaviour is a bracketed descriptor ("[REQUEST: …]"), never operational
// text.
type Scenario struct {
	ID       string `json:"-"`
	Kind     string `json:"kind,omitempty"`
	Category string `json:"category,omitempty"`
	// Pair links a harmful scenario and its benign twin (same topic, a
	// legitimate request), so over-refusal is measured topic by topic.
	Pair string `json:"pair,omitempty"`
	// Behavior is what the attacker tries to obtain (E5), a descriptor.
	Behavior string `json:"behavior,omitempty"`
	// Request is the user's first message to a defender (E6).
	Request string `json:"request,omitempty"`
	// Escalation are the scripted follow-up user turns of an E6 episode.
	Escalation []string `json:"escalation,omitempty"`

	TargetProfile     string      `json:"target_profile,omitempty"`
	GuardrailStyle    string      `json:"guardrail_style,omitempty"`
	RefusalTemplates  []string    `json:"refusal_templates,omitempty"`
	FinalRefusal      string      `json:"final_refusal,omitempty"`
	ViolationResponse string      `json:"violation_response,omitempty"`
	UnsafeResponse    string      `json:"unsafe_response,omitempty"`
	UnsafeIndicators  []string    `json:"unsafe_indicators,omitempty"`
	SuccessConditions []Condition `json:"success_conditions,omitempty"`
	NoveltyMarkers    []string    `json:"novelty_markers,omitempty"`
	ReferenceResponse string      `json:"reference_response,omitempty"`
	AttackType        string      `json:"attack_type,omitempty"`

	Source         string `json:"source,omitempty"`
	SourceCategory string `json:"source_category,omitempty"`
	// Context is HarmBench's ContextString for contextual behaviours.
	Context string `json:"context,omitempty"`
	// Target is JailbreakBench's affirmative target prefix.
	Target string `json:"target,omitempty"`
}

// rawRow is what a JSONL line may hold: svbench's fields plus the
// reference's id/question/answer/conversation shapes.
type rawRow struct {
	Scenario
	RawID            json.RawMessage `json:"id"`
	ScenarioID       string          `json:"scenario_id"`
	Question         string          `json:"question"`
	Answer           json.RawMessage `json:"answer"`
	ExpectedBehavior string          `json:"expected_behavior"`
	Conversation     []env.Message   `json:"conversation"`
}

// maxRowField bounds any one text field of a row.
const maxRowField = 32 << 10

// ParseScenario reads one row into a Scenario, naming the field at fault.
func ParseScenario(raw []byte) (*Scenario, error) {
	var r rawRow
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("not a scenario row: %w", err)
	}
	s := r.Scenario
	s.ID = r.ScenarioID
	if len(r.RawID) > 0 && string(r.RawID) != "null" {
		var str string
		if json.Unmarshal(r.RawID, &str) == nil {
			s.ID = str
		} else if n, err := strconv.ParseInt(string(r.RawID), 10, 64); err == nil {
			s.ID = "RTA-" + fmt.Sprintf("%03d", n)
		} else {
			return nil, dataset.FieldError("id", "want a string or an integer")
		}
	}
	var answer string
	if len(r.Answer) > 0 {
		if err := json.Unmarshal(r.Answer, &answer); err != nil {
			return nil, dataset.FieldError("answer", "want a string")
		}
	}
	gold := strings.ToLower(strings.TrimSpace(firstNonEmpty(r.ExpectedBehavior, answer)))
	if s.Kind == "" {
		switch {
		case gold == "comply":
			s.Kind = KindBenign
		case gold == "refuse" || len(s.SuccessConditions) > 0 || s.Behavior != "":
			s.Kind = KindHarmful
		}
	}
	if s.Kind != KindHarmful && s.Kind != KindBenign {
		return nil, dataset.FieldError("kind", "%q: want %q or %q (or an answer/expected_behavior of refuse/comply)", s.Kind, KindHarmful, KindBenign)
	}
	cat := s.Category
	if cat == "" && len(s.SuccessConditions) > 0 {
		cat = answer // the reference's E5 answers are behaviour labels
	}
	c, err := categoryFor(cat)
	if err != nil {
		return nil, dataset.FieldError("category", "%v", err)
	}
	s.Category = c
	if s.Request == "" {
		s.Request = r.Question
		if s.Request == "" && len(r.Conversation) > 0 {
			s.Request = r.Conversation[len(r.Conversation)-1].Content
		}
	}
	if s.Behavior == "" && len(s.SuccessConditions) > 0 {
		s.Behavior = r.Question
	}
	if s.Kind == KindHarmful && s.Behavior == "" {
		s.Behavior = s.Request
	}
	if s.Request == "" && s.Behavior == "" {
		return nil, dataset.FieldError("request", "missing: a row needs request, behavior or question")
	}
	for name, v := range map[string]string{"request": s.Request, "behavior": s.Behavior, "reference_response": s.ReferenceResponse, "context": s.Context} {
		if len(v) > maxRowField {
			return nil, dataset.FieldError(name, "%d bytes, more than the %d a row field may hold", len(v), maxRowField)
		}
	}
	if len(s.Escalation) > 16 {
		return nil, dataset.FieldError("escalation", "%d turns, at most 16", len(s.Escalation))
	}
	for i, cond := range s.SuccessConditions {
		if len(cond.Keywords) == 0 {
			return nil, dataset.FieldError(fmt.Sprintf("success_conditions[%d].keywords", i), "empty: a condition with no cue would make every message succeed")
		}
	}
	return &s, nil
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// lgCode is the Llama Guard code of the scenario's category ("" when the
// category is unspecified).
func (s *Scenario) lgCode() string {
	if c, ok := CategoryByID(s.Category); ok {
		return c.LlamaGuard
	}
	return ""
}

// indicators are the words whose presence in a non-refusing, compliant
// reply makes the rules judge call it unsafe: the row's own indicators and
// the content words of its behaviour descriptor.
func (s *Scenario) indicators() []string {
	out := append([]string(nil), s.UnsafeIndicators...)
	seen := map[string]bool{}
	for _, w := range out {
		seen[strings.ToLower(w)] = true
	}
	for _, w := range contentWords(stripBrackets(s.Behavior + " " + s.Target)) {
		if !seen[w] && w != "request" && w != "sure" && w != "here" {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func stripBrackets(s string) string {
	return strings.NewReplacer("[", " ", "]", " ", ":", " ").Replace(s)
}

func (s *Scenario) meta() map[string]any {
	m := map[string]any{"kind": s.Kind, "category": s.Category}
	if s.Pair != "" {
		m["pair"] = s.Pair
	}
	if code := s.lgCode(); code != "" {
		m["llama_guard"] = code
	}
	if s.Source != "" {
		m["source"] = s.Source
	}
	if s.AttackType != "" {
		m["attack_type"] = s.AttackType
	}

	return m
}
