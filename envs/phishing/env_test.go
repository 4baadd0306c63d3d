package phishing

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/base/sharedtest"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/phishing/mail"
	"github.com/svbench/svbench/metrics"
)

func score(t *testing.T, ex env.Example, completion, rubric string) env.Score {
	t.Helper()
	s, err := New().Score(context.Background(), ex, &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: completion}}}, rubric)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func example(t *testing.T, row string) env.Example {
	t.Helper()
	ex, err := New().ParseExample(json.RawMessage(row))
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

const phishRow = `{"id":"p1","email":"From: \"PayPal\" <security@paypa1-secure.com>\r\nTo: bob@northwind.com\r\nSubject: Urgent: verify your account\r\n\r\nVerify your account within 24 hours at http://bit.ly/x7Yq or it will be suspended.\r\n","answer":"Phishing","meta":{"campaign":"credential_harvest"}}`
const legitRow = `{"id":"l1","email":"From: GitHub <noreply@github.com>\r\nAuthentication-Results: mx; spf=pass; dkim=pass; dmarc=pass\r\nSubject: Your receipt\r\n\r\nThanks for your payment. https://github.com/settings/billing\r\n","answer":"Legitimate","meta":{"campaign":"legit_receipt"}}`

func TestReferenceRubric(t *testing.T) {
	ph := example(t, phishRow)
	lg := example(t, legitRow)
	cases := []struct {
		name string
		ex   env.Example
		out  string
		want map[string]float64
	}{
		{"correct with indicator evidence", ph, `{"label":"phishing","confidence":0.9,"evidence":["http://bit.ly/x7Yq","urgent"]}`,
			map[string]float64{"accuracy": 1, "format": 1, "calibration": 0.9, "asymmetric_cost": 1, "evidence": 1}},
		{"missed phish", ph, `{"label":"Legitimate","confidence":0.8}`,
			map[string]float64{"accuracy": 0, "format": 1, "calibration": 0.19999999999999996, "asymmetric_cost": -1, "evidence": 0}},
		{"abstain on phish", ph, `{"label":"Abstain","confidence":"0.5"}`,
			map[string]float64{"accuracy": 0, "format": 1, "calibration": 0.5, "asymmetric_cost": 0.3}},
		{"false positive", lg, `{"label":"Phishing","confidence":1}`,
			map[string]float64{"accuracy": 0, "asymmetric_cost": -0.2, "calibration": 0, "evidence": 0}},
		{"abstain on legit", lg, "```json\n{\"label\":\"Abstain\",\"confidence\":0.5}\n```",
			map[string]float64{"asymmetric_cost": 0.5, "format": 1}},
		{"confidence 2.0", ph, `{"label":"Phishing","confidence":2.0}`,
			map[string]float64{"format": 0, "calibration": 0, "accuracy": 1}},
		{"one-character evidence games the reference", ph, `{"label":"Phishing","confidence":1,"evidence":["a","e"]}`,
			map[string]float64{"evidence": 1}},
		{"prompt-only evidence scores half", ph, `{"label":"Phishing","confidence":1,"evidence":["tell me"]}`,
			map[string]float64{"evidence": 0}},
		{"blank evidence breaks format", ph, `{"label":"Phishing","confidence":1,"evidence":["  "]}`,
			map[string]float64{"format": 0}},
		{"no JSON", ph, `I think it is phishing`, map[string]float64{"accuracy": 0, "format": 0, "calibration": 0, "asymmetric_cost": 0, "evidence": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := score(t, tc.ex, tc.out, RubricReference)
			for k, v := range tc.want {
				if math.Abs(s.Components[k]-v) > 1e-9 {
					t.Errorf("%s = %v, want %v (all %v)", k, s.Components[k], v, s.Components)
				}
			}
			total := 0.0
			for k, v := range s.Components {
				total += s.Weights[k] * v
			}
			if math.Abs(total-s.Total) > 1e-12 {
				t.Errorf("total %v != Σ w·c %v", s.Total, total)
			}
		})
	}
	if w := score(t, ph, "{}", RubricReference).Weights; w["accuracy"] != 1 || w["format"] != .2 || w["calibration"] != .2 || w["asymmetric_cost"] != .4 || w["evidence"] != .2 {
		t.Errorf("reference weights %v", w)
	}
}

func TestDefaultRubricEvidence(t *testing.T) {
	ph := example(t, phishRow)
	lg := example(t, legitRow)
	many := make([]string, 10000)
	for i := range many {
		many[i] = fmt.Sprintf(`{"type":"urgency","value":"Urgent %d"}`, i)
	}
	oneChar := make([]string, 10000)
	for i := range oneChar {
		oneChar[i] = `"a"`
	}
	cases := []struct {
		name           string
		ex             env.Example
		out            string
		evMin, evMax   float64
		format         bool
		precision, rec float64
	}{
		{"grounded typed evidence", ph, `{"label":"Phishing","confidence":0.9,"evidence":[{"type":"url_shortener","value":"http://bit.ly/x7Yq"},{"type":"sender_lookalike","value":"paypa1-secure.com"},{"type":"display_name_spoof","value":"PayPal"},{"type":"urgency","value":"within 24 hours"}]}`,
			0.5, 1, true, 1, -1},
		{"right value, wrong type", ph, `{"label":"Phishing","confidence":0.9,"evidence":[{"type":"ip_url","value":"http://bit.ly/x7Yq"}]}`,
			0, 0.01, true, 0, -1},
		{"invented value", ph, `{"label":"Phishing","confidence":0.9,"evidence":[{"type":"lookalike_domain","value":"http://evil.example/login"}]}`,
			0, 0.01, true, 0, -1},
		{"duplicates count against precision", ph, `{"label":"Phishing","confidence":0.9,"evidence":[{"type":"url_shortener","value":"http://bit.ly/x7Yq"},{"type":"url_shortener","value":"HTTP://BIT.LY/x7Yq"},{"type":"url_shortener","value":"bit.ly/x7Yq"}]}`,
			0, 0.5, true, 1.0 / 3, -1},
		{"untyped strings are ungrounded", ph, `{"label":"Phishing","confidence":0.9,"evidence":["http://bit.ly/x7Yq"]}`,
			0, 0.01, false, 0, -1},
		{"10,000 items: bounded and penalised", ph, `{"label":"Phishing","confidence":0.9,"evidence":[` + strings.Join(many, ",") + `]}`,
			-0.5, 0.01, false, -1, -1},
		{"10,000 one-character strings", ph, `{"label":"Phishing","confidence":0.9,"evidence":[` + strings.Join(oneChar, ",") + `]}`,
			-0.5, -0.5, false, 0, -1},
		{"legit with no evidence", lg, `{"label":"Legitimate","confidence":0.9,"evidence":[]}`, 1, 1, true, -1, -1},
		{"invented red flag on legit", lg, `{"label":"Legitimate","confidence":0.9,"evidence":[{"type":"lookalike_domain","value":"github.com"}]}`,
			0, 0, true, 0, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := score(t, tc.ex, tc.out, RubricDefault)
			ev := s.Components["evidence"]
			if ev < tc.evMin-1e-9 || ev > tc.evMax+1e-9 {
				t.Errorf("evidence = %v, want in [%v, %v]; parsed %v", ev, tc.evMin, tc.evMax, s.Parsed)
			}
			if got := s.Parsed["format_valid"].(bool); got != tc.format {
				t.Errorf("format_valid = %v, want %v", got, tc.format)
			}
			if tc.precision >= 0 && math.Abs(s.Parsed["evidence_precision"].(float64)-tc.precision) > 1e-9 {
				t.Errorf("evidence_precision = %v, want %v", s.Parsed["evidence_precision"], tc.precision)
			}
		})
	}
}

func TestDefaultRubricCosts(t *testing.T) {
	ph := example(t, phishRow)
	lg := example(t, legitRow)
	get := func(ex env.Example, out string) map[string]float64 { return score(t, ex, out, "").Components }
	miss := get(ph, `{"label":"Legitimate","confidence":0.9}`)["asymmetric_cost"]
	abst := get(ph, `{"label":"Abstain","confidence":0.5}`)["asymmetric_cost"]
	fa := get(lg, `{"label":"Phishing","confidence":0.9}`)["asymmetric_cost"]
	abstL := get(lg, `{"label":"Abstain","confidence":0.5}`)["asymmetric_cost"]
	if !(miss < fa && fa < abstL && miss < abst) {
		t.Errorf("cost order wrong: miss %v, false alarm %v, abstain(phish) %v, abstain(legit) %v", miss, fa, abst, abstL)
	}
	// Proper scoring: for a 70%-sure model, reporting 0.7 beats reporting 1.0 in expectation.
	exp := func(c float64) float64 {
		right := get(ph, fmt.Sprintf(`{"label":"Phishing","confidence":%v}`, c))["calibration"]
		wrong := get(lg, fmt.Sprintf(`{"label":"Phishing","confidence":%v}`, c))["calibration"]
		return 0.7*right + 0.3*wrong
	}
	if exp(0.7) <= exp(1.0) || exp(0.7) <= exp(0.5) {
		t.Errorf("calibration is not proper: E[0.7]=%v E[1.0]=%v E[0.5]=%v", exp(0.7), exp(1.0), exp(0.5))
	}
	if c := get(ph, `{"label":"Phishing","confidence":"0.9"}`); c["format"] != 0 || c["calibration"] != 0 {
		t.Errorf("string confidence must fail the default format and calibration: %v", c)
	}
}

func TestMiniSetAndBaseline(t *testing.T) {
	e := New()
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Info.Rows < 150 {
		t.Fatalf("mini set has %d rows, want ≥ 150", ds.Info.Rows)
	}
	pol, ok := e.Policy(PolicyIndicators)
	if !ok {
		t.Fatal("builtin:indicators missing")
	}
	langs, campaigns := map[string]int{}, map[string]int{}
	correct, total := 0, 0.0
	for _, ex := range ds.Examples {
		ep, err := e.Start(context.Background(), ex)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := pol.Act(context.Background(), ep.Prompt(), nil)
		if err != nil {
			t.Fatal(err)
		}
		s := score(t, ex, msg.Content, "")
		total += s.Total
		if s.Components["accuracy"] == 1 {
			correct++
		}
		if s.Parsed["format_valid"] != true {
			t.Errorf("%s: baseline output not well-formed: %s", ex.ID, msg.Content)
		}
		if ex.Meta["campaign"] != nil {
			campaigns[ex.Meta["campaign"].(string)]++
		}
		langs[fmt.Sprint(ex.Meta["language"])]++
		if p := s.Parsed["evidence_precision"].(float64); s.Parsed["predicted_label"] == LabelPhishing && p != 1 {
			t.Errorf("%s: the baseline quotes extracted indicators, precision must be 1, got %v (%s)", ex.ID, p, msg.Content)
		}
	}
	acc := float64(correct) / float64(len(ds.Examples))
	t.Logf("builtin:indicators on the mini set: accuracy %.3f, mean reward %.3f", acc, total/float64(len(ds.Examples)))
	if acc < 0.75 {
		t.Errorf("baseline accuracy %.3f: the extractor or weights regressed", acc)
	}
	if len(langs) != 3 || len(campaigns) != 12 {
		t.Errorf("mini set coverage: languages %v campaigns %v", langs, campaigns)
	}
}

// TestReferenceFixtures loads the reference's fallback rows (row shape
// question/answer/metadata.phishing_indicators) and checks the baseline
// separates them.
func TestReferenceFixtures(t *testing.T) {
	path := filepath.Join(sharedtest.Dir(t), "reference-data", "e3_e6_reference_fixtures.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Rows []json.RawMessage `json:"e4_synthetic_fallback"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	e := New()
	pol, _ := e.Policy(PolicyIndicators)
	right := 0
	for i, raw := range fx.Rows {
		ex, err := e.ParseExample(raw)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		msg, _ := pol.Act(context.Background(), ex.Prompt, nil)
		s := score(t, ex, msg.Content, RubricReference)
		if s.Components["accuracy"] == 1 {
			right++
		}
		if _, ok := ex.Meta["phishing_indicators"]; !ok {
			t.Errorf("row %d: reference indicators not kept", i)
		}
	}
	if right < 10 {
		t.Errorf("baseline right on %d/12 reference rows", right)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(p, []byte(`{"email":"From: a@b\n\nx","answer":"Phishing"}`+"\n"+`{"email":"From: a@b\n\nx"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New().Load(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), `"answer"`) {
		t.Fatalf("want an error naming line 2 and field answer, got %v", err)
	}
}

func FuzzParseOutput(f *testing.F) {
	f.Add(`{"label":"Phishing","confidence":0.9,"evidence":[{"type":"urgency","value":"urgent"}]}`)
	f.Add("```json\n{\"label\":\"abstain\",\"confidence\":\"1e-1\",\"evidence\":\"x\"}\n```")
	f.Add(`<think>{</think>{"label": 1, "evidence": [null, 2, {"type": 3}]}`)
	f.Add(`{"label":"Phishing","confidence":NaN,"evidence":[NaN,{"type":"urgency","value":Infinity}]}`)
	f.Add("```json\n{\"label\":\"Legitimate\",\"confidence\":-Infinity,\"evidence\":Infinity}\n```")
	f.Add(`{"label":"\u0000NaN","confidence":Infinity}`)
	ex, err := New().ParseExample(json.RawMessage(phishRow))
	if err != nil {
		f.Fatal(err)
	}
	p := ex.Payload.(*payload)
	f.Fuzz(func(t *testing.T, s string) {
		o := ParseOutput(s)
		if len(o.Items) > MaxEvidence {
			t.Fatalf("%d items kept", len(o.Items))
		}
		for _, rub := range []string{RubricDefault, RubricReference} {
			sc, err := scoreText(p, s, rub)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(sc.Total) || sc.Total < -1.5 || sc.Total > 2.1 {
				t.Fatalf("%s total %v out of range", rub, sc.Total)
			}
			if c, _ := sc.Parsed["confidence"].(float64); math.IsNaN(c) || c < 0 || c > 1 {
				t.Fatalf("%s confidence %v outside [0, 1]", rub, sc.Parsed["confidence"])
			}
		}
	})
}

// TestBaselineCalibration guards the baseline's calibration on generated
// rows it was not fitted on: another seed, and dev's template families
// (the slope is fitted on train's).
func TestBaselineCalibration(t *testing.T) {
	var cal metrics.Calibration
	rows, err := GenerateSplit(env.SplitDev, 99, 600)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		v := Classify(mail.Analyze(r.Email))
		if v.Label == LabelAbstain {
			continue
		}
		cal.Add(v.Confidence, v.Label == r.Answer)
	}
	t.Logf("builtin:indicators on 600 generated dev-family rows (seed 99): ECE %.4f, Brier %.4f", cal.ECE(), cal.Brier())
	if cal.ECE() > 0.08 {
		t.Errorf("ECE %.4f > 0.08: weights or extractor changed; refit plattA", cal.ECE())
	}
}

// TestLargeMessageRow: a 25 MB attachment is sized, not shown to the model,
// and its risky name still counts as an indicator.
func TestLargeMessageRow(t *testing.T) {
	var b strings.Builder
	b.WriteString("From: \"DHL\" <x@dhl-paket.info>\r\nSubject: Sendung\r\nContent-Type: multipart/mixed; boundary=Z\r\n\r\n--Z\r\nContent-Type: text/plain\r\n\r\nSiehe Anhang.\r\n--Z\r\nContent-Type: application/octet-stream; name=\"beleg.pdf.iso\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	line := strings.Repeat("QUFB", 19) + "\r\n"
	for b.Len() < 25<<20 {
		b.WriteString(line)
	}
	b.WriteString("--Z--\r\n")
	row, _ := json.Marshal(Row{ID: "big", Email: b.String(), Answer: LabelPhishing})
	ex := example(t, string(row))
	if n := len(ex.Prompt[1].Content); n > 2*maxPromptEmail {
		t.Fatalf("prompt is %d bytes", n)
	}
	if !strings.Contains(ex.Prompt[1].Content, "beleg.pdf.iso") {
		t.Errorf("summary prompt lacks the attachment name")
	}
	s := score(t, ex, `{"label":"Phishing","confidence":0.9,"evidence":[{"type":"double_extension","value":"beleg.pdf.iso"},{"type":"sender_lookalike","value":"x@dhl-paket.info"}]}`, "")
	if s.Parsed["evidence_grounded"] != 2 {
		t.Errorf("evidence on a summarised message not grounded: %v", s.Parsed)
	}
}

// TestConcurrentScoring shares one example across goroutines (run with -race).
func TestConcurrentScoring(t *testing.T) {
	ex := example(t, phishRow)
	done := make(chan env.Score, 8)
	for i := 0; i < 8; i++ {
		go func() {
			s, _ := New().Score(context.Background(), ex, &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: `{"label":"Phishing","confidence":0.8,"evidence":[{"type":"url_shortener","value":"http://bit.ly/x7Yq"}]}`}}}, "")
			done <- s
		}()
	}
	first := <-done
	for i := 1; i < 8; i++ {
		if s := <-done; s.Total != first.Total {
			t.Fatalf("scores differ: %v vs %v", s.Total, first.Total)
		}
	}
}

// TestGeneratorSignals checks the generator and the extractor agree: easy
// phishing rows carry technical red flags, legitimate rows (hard negatives
// included) carry none, except the DKIM (and, for an outside author, DMARC)
// failure a mailing list causes on the rows it relays, which show its
// List-Id.
func TestGeneratorSignals(t *testing.T) {
	technical := map[string]bool{
		mail.TypeDisplayNameSpoof: true, mail.TypeSenderLookalike: true, mail.TypeReplyToMismatch: true,
		mail.TypeReturnPathMismatch: true, mail.TypeAuthFailure: true, mail.TypeLookalikeDomain: true,
		mail.TypeIPURL: true, mail.TypeShortener: true, mail.TypeLinkMismatch: true, mail.TypeCredentialURL: true,
		mail.TypeCredentialForm: true, mail.TypeRiskyAttachment: true, mail.TypeDoubleExtension: true,
	}
	for _, r := range Generate(11, 600) {
		a := mail.Analyze(r.Email)
		if len(a.Msg.Notes) > 0 {
			t.Errorf("%s: generated mail parsed with notes %v", r.ID, a.Msg.Notes)
		}
		head, _, _ := strings.Cut(r.Email, "\r\n\r\n")
		listed := strings.Contains(head, "\r\nList-Id: ")
		n := 0
		for _, in := range a.Indicators {
			if !technical[in.Type] {
				continue
			}
			if r.Answer == LabelLegitimate && listed && in.Type == mail.TypeAuthFailure && (in.Value == "dkim=fail" || in.Value == "dmarc=fail") {
				continue
			}
			n++
		}
		if listed && a.Msg.Auth.DKIM != "fail" && a.Msg.Auth.DKIM != "" {
			t.Errorf("%s (%s): relayed by a list, DKIM %q", r.ID, r.Meta.Campaign, a.Msg.Auth.DKIM)
		}
		switch {
		case r.Answer == LabelLegitimate && n > 0:
			t.Errorf("%s (%s): legitimate mail with technical indicators %+v", r.ID, r.Meta.Campaign, a.Indicators)
		case r.Answer == LabelPhishing && r.Meta.Difficulty == "easy" && n < 2 && r.Meta.Campaign != CampaignGiftCard && r.Meta.Campaign != CampaignPayrollChange:
			t.Errorf("%s (%s): easy phishing with %d technical indicators %+v", r.ID, r.Meta.Campaign, n, a.Indicators)
		}
	}
}
