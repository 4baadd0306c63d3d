package phishing

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/phishing/mail"

	"github.com/svbench/svbench/base/clip"
)

// Row is svbench's E4 dataset row. Email is the raw RFC 5322 message, so the
// parser runs on real MIME.
type Row struct {
	ID     string  `json:"id"`
	Email  string  `json:"email"`
	Answer string  `json:"answer"`
	Meta   RowMeta `json:"meta"`
}

// RowMeta describes where a row came from, for per-campaign reports.
type RowMeta struct {
	Campaign   string `json:"campaign"`
	Language   string `json:"language,omitempty"`
	Difficulty string `json:"difficulty,omitempty"`
	// Template is the generator's template family ("parcel/on-its-way"):
	// train, dev and test never share one. Never shown to the model.
	Template string `json:"template,omitempty"`
	Source   string `json:"source"`
}

// Prompt markers around the email in the user message. The baseline and
// the scorer find the email between them.
const (
	emailBegin = "<<<EMAIL\n"
	emailEnd   = "\nEMAIL>>>"
)

// maxPromptEmail is the most raw email shown to a model; larger messages
// are shown as their decoded summary (headers, text, attachment list).
const maxPromptEmail = 64 << 10

// payload is the scorer's decoded view of a row, built once per example.
type payload struct {
	gold   string
	email  string // the email text shown to the model
	raw    string // the full message analysed (email unless it was summarised)
	refInd []string
	once   sync.Once
	an     *mail.Analysis
	hay    string
}

func (p *payload) analysis() (*mail.Analysis, string) {
	p.once.Do(func() {
		src := p.raw
		if src == "" {
			src = p.email
		}
		p.an = mail.Analyze(src)
		p.hay = haystack(p.an)
	})
	return p.an, p.hay
}

// haystack is the normalised text evidence must quote from: decoded
// headers, subject, visible text, link targets and attachment names.
func haystack(a *mail.Analysis) string {
	var b strings.Builder
	m := a.Msg
	b.WriteString(m.HeaderText)
	b.WriteByte('\n')
	b.WriteString(m.Subject)
	b.WriteByte('\n')
	b.WriteString(m.Text)
	for _, l := range m.Links {
		b.WriteByte('\n')
		b.WriteString(l.Href)
	}
	for _, f := range m.Forms {
		b.WriteByte('\n')
		b.WriteString(f.Action + " " + f.Field)
	}
	for _, at := range m.Attachments {
		b.WriteByte('\n')
		b.WriteString(at.Filename)
	}
	return normalize(b.String())
}

// normalize lower-cases and collapses whitespace.
func normalize(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// UserPrompt renders the user message for an email.
func UserPrompt(email string) string {
	return "Classify the email below as Phishing or Legitimate (or Abstain if it cannot be decided). " +
		"The message is given as received, headers and MIME body included, between the markers.\n\n" +
		emailBegin + email + emailEnd
}

// EmailFromPrompt recovers the email from a conversation: the text between
// the markers of the last user message, or the whole message when it has
// none (reference prompts).
func EmailFromPrompt(msgs []env.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != env.RoleUser {
			continue
		}
		c := msgs[i].Content
		if b := strings.Index(c, emailBegin); b >= 0 {
			c = c[b+len(emailBegin):]
			if e := strings.LastIndex(c, emailEnd); e >= 0 {
				c = c[:e]
			}
		}
		return c
	}
	return ""
}

// shownEmail bounds what goes into a prompt.
func shownEmail(raw string) string {
	if len(raw) <= maxPromptEmail {
		return raw
	}
	m := mail.Parse(raw)
	var b strings.Builder
	b.WriteString(m.HeaderText)
	b.WriteString("X-Svbench-Note: message of ")
	fmt.Fprintf(&b, "%d bytes shown as decoded text\n\n", len(raw))
	t := m.Text
	if len(t) > maxPromptEmail/2 {
		t = strings.ToValidUTF8(t[:maxPromptEmail/2], "") + "\n[text truncated]"
	}
	b.WriteString(t)
	for _, l := range m.Links {
		if strings.Contains(t, l.Href) {
			continue
		}
		fmt.Fprintf(&b, "\n[link] %s", l.Href)
		if l.Text != "" {
			fmt.Fprintf(&b, " (shown as %q)", l.Text)
		}
	}
	for _, a := range m.Attachments {
		fmt.Fprintf(&b, "\n[attachment] %s (%s, %d bytes, not shown)", a.Filename, a.ContentType, a.Size)
	}
	return b.String()
}

// rawRow accepts svbench rows and the reference's row shape
// (question/prompt text, answer, metadata.phishing_indicators).
type rawRow struct {
	ID       json.RawMessage `json:"id"`
	Email    *string         `json:"email"`
	Raw      *string         `json:"raw"`
	Question json.RawMessage `json:"question"`
	Prompt   json.RawMessage `json:"prompt"`
	Text     *string         `json:"text"`
	Answer   json.RawMessage `json:"answer"`
	Meta     map[string]any  `json:"meta"`
	Metadata struct {
		Indicators *[]string `json:"phishing_indicators"`
	} `json:"metadata"`
}

func parseRow(raw []byte, needEmail bool) (env.Example, error) {
	var r rawRow
	if err := json.Unmarshal(raw, &r); err != nil {
		return env.Example{}, dataset.FieldError("", "is not an E4 row: %v", err)
	}
	gold, err := parseAnswer(r.Answer)
	if err != nil {
		return env.Example{}, dataset.FieldError("answer", "%v", err)
	}
	email := ""
	switch {
	case r.Email != nil:
		email = *r.Email
	case r.Raw != nil:
		email = *r.Raw
	case len(r.Question) > 0 && string(r.Question) != "null":
		email, err = promptText(r.Question)
		if err != nil {
			return env.Example{}, dataset.FieldError("question", "%v", err)
		}
	case len(r.Prompt) > 0 && string(r.Prompt) != "null":
		email, err = promptText(r.Prompt)
		if err != nil {
			return env.Example{}, dataset.FieldError("prompt", "%v", err)
		}
	case r.Text != nil:
		email = *r.Text
	}
	if needEmail && strings.TrimSpace(email) == "" {
		return env.Example{}, dataset.FieldError("email", "is missing or empty; each row needs the raw message (\"email\") or the reference's \"question\" text")
	}
	id := ""
	if len(r.ID) > 0 {
		var s string
		if json.Unmarshal(r.ID, &s) == nil {
			id = s
		} else {
			id = strings.Trim(string(r.ID), `"`)
		}
	}
	meta := r.Meta
	if meta == nil {
		meta = map[string]any{}
	}
	if _, ok := meta["campaign"]; !ok {
		meta["campaign"] = "unknown"
	}
	var refInd []string
	if r.Metadata.Indicators != nil {
		refInd = *r.Metadata.Indicators
		if refInd == nil {
			refInd = []string{}
		}
		meta["phishing_indicators"] = refInd
	} else if v, ok := meta["phishing_indicators"].([]any); ok {
		// A recorded example keeps the reference's indicators in meta
		// (set just above when its row was first read).
		refInd = []string{}
		for _, x := range v {
			if s, ok := x.(string); ok {
				refInd = append(refInd, s)
			}
		}
	} else {
		refInd = ReferenceIndicators(email)
	}
	shown := shownEmail(email)
	ans, _ := json.Marshal(gold)
	return env.Example{
		ID:      id,
		Prompt:  []env.Message{{Role: env.RoleSystem, Content: SystemPrompt}, {Role: env.RoleUser, Content: UserPrompt(shown)}},
		Answer:  ans,
		Meta:    meta,
		Payload: &payload{gold: gold, email: shown, raw: email, refInd: refInd},
	}, nil
}

// promptText reads a reference question/prompt: a string or a list of
// chat messages (the user message's content).
func promptText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var msgs []env.Message
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return "", fmt.Errorf("must be a string or a list of chat messages")
	}
	return EmailFromPrompt(msgs), nil
}

// parseAnswer reads a gold label: "Phishing" / "Legitimate" in any case,
// the public corpora's "Phishing Email" / "Safe Email", or 1/0 and
// true/false. Anything else is refused: a gold label silently read as
// Legitimate scores a correct answer as wrong. Other corpora's labels
// (spam, ham, malicious, …) are mapped explicitly by `svbench data import
// e4 --label-map`, never here.
func parseAnswer(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", fmt.Errorf("is missing; use \"Phishing\" or \"Legitimate\"")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if l, ok := goldLabel(s); ok {
			return l, nil
		}
		hint := ""
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "malicious", "benign":
			hint = " (an E1 network-logs label: is this an e1 dataset?)"
		case "spam", "ham", "phish", "fraud", "safe", "legit":
			hint = " (map it with svbench data import e4 --label-map)"
		}
		return "", fmt.Errorf("is %q, not a gold label; use \"Phishing\" or \"Legitimate\" (or 1/0)%s", clip.Bytes(s, 40, clip.Ellipsis), hint)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		switch n.String() {
		case "1":
			return LabelPhishing, nil
		case "0":
			return LabelLegitimate, nil
		}
		return "", fmt.Errorf("is %s; a numeric gold label must be 1 (Phishing) or 0 (Legitimate)", n)
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return LabelPhishing, nil
		}
		return LabelLegitimate, nil
	}
	return "", fmt.Errorf("must be a string label or 0/1, got %s", clip.Bytes(string(raw), 40, clip.Ellipsis))
}

func goldLabel(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "phishing", "phishing email":
		return LabelPhishing, true
	case "legitimate", "safe email":
		return LabelLegitimate, true
	}
	return "", false
}

// The reference's indicator recipe (for the reference rubric only).
var (
	refURL      = regexp.MustCompile(`https?://[^\s<>"'()\[\]{}]+(?:\([^\s<>"'()\[\]{}]*\))?[^\s<>"'()\[\]{}.,;:!?]*`)
	refKeywords = []string{"verify", "reset", "urgent", "credentials", "bank", "login", "password", "account", "invoice", "refund", "wire", "bitcoin"}
)

// ReferenceIndicators computes metadata.phishing_indicators the way the
// reference does for rows that lack it: URL regex matches, the keywords
// present, the sender when it has one of {0,1,-} and one of {amaz0n,
// paypai, support, alert}, the subject when it says urgent, action
// required or verify; deduplicated case-insensitively.
func ReferenceIndicators(email string) []string {
	m := mail.Parse(email)
	text := m.Text
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		k := strings.ToLower(s)
		if s == "" || seen[k] {
			return
		}
		seen[k] = true
		out = append(out, s)
	}
	for _, u := range refURL.FindAllString(text, 200) {
		add(u)
	}
	lower := strings.ToLower(text)
	for _, k := range refKeywords {
		if strings.Contains(lower, k) {
			add(k)
		}
	}
	sender := strings.ToLower(m.From.Raw)
	if strings.ContainsAny(sender, "01-") {
		for _, t := range []string{"amaz0n", "paypai", "support", "alert"} {
			if strings.Contains(sender, t) {
				add(m.From.Raw)
				break
			}
		}
	}
	subj := strings.ToLower(m.Subject)
	if strings.Contains(subj, "urgent") || strings.Contains(subj, "action required") || strings.Contains(subj, "verify") {
		add(m.Subject)
	}
	return out
}
