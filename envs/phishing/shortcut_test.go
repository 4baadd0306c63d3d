package phishing

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/phishing/mail"
)

// authFields are the header facts a one-field rule could key on instead of
// reading the email: each verdict as written ("absent" without one).
var authFields = map[string]func(mail.AuthResults) string{
	"dkim":  func(a mail.AuthResults) string { return a.DKIM },
	"spf":   func(a mail.AuthResults) string { return a.SPF },
	"dmarc": func(a mail.AuthResults) string { return a.DMARC },
	// All three verdicts as one value: the header read as a whole.
	"spf+dkim+dmarc": func(a mail.AuthResults) string {
		if a.SPF+a.DKIM+a.DMARC == "" {
			return ""
		}
		return a.SPF + "/" + a.DKIM + "/" + a.DMARC
	},
}

type labelled struct {
	auth  mail.AuthResults
	label string
}

func authRows(rows []Row) []labelled {
	out := make([]labelled, len(rows))
	for i, r := range rows {
		out[i] = labelled{mail.Parse(r.Email).Auth, r.Answer}
	}
	return out
}

func miniRowsForTest(t *testing.T) []Row {
	t.Helper()
	var rows []Row
	sc := bufio.NewScanner(bytes.NewReader(miniSet))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r Row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// oneFieldRule fits "label = majority label of the rows with this value"
// on train (ties and unseen values go to train's majority label) and
// returns its accuracy on train and on test.
func oneFieldRule(field func(mail.AuthResults) string, train, test []labelled) (float64, float64) {
	value := func(a mail.AuthResults) string {
		if v := field(a); v != "" {
			return v
		}
		return "absent"
	}
	counts := map[string]map[string]int{}
	overall := map[string]int{}
	for _, r := range train {
		v := value(r.auth)
		if counts[v] == nil {
			counts[v] = map[string]int{}
		}
		counts[v][r.label]++
		overall[r.label]++
	}
	majority := func(c map[string]int, fallback string) string {
		best, n, tie := fallback, -1, false
		for _, l := range slices.Sorted(maps.Keys(c)) {
			switch {
			case c[l] > n:
				best, n, tie = l, c[l], false
			case c[l] == n:
				tie = true
			}
		}
		if tie {
			return fallback
		}
		return best
	}
	def := majority(overall, LabelPhishing)
	rule := map[string]string{}
	for v, c := range counts {
		rule[v] = majority(c, def)
	}
	acc := func(rows []labelled) float64 {
		right := 0
		for _, r := range rows {
			pred, ok := rule[value(r.auth)]
			if !ok {
				pred = def
			}
			if pred == r.label {
				right++
			}
		}
		return float64(right) / float64(len(rows))
	}
	return acc(train), acc(test)
}

// TestAuthVerdictShortcut guards against the generator letting one header
// verdict stand in for the label. Generator e4-gen/1 gave every legitimate
// row dkim=pass and 88% of phishing none or a failing one: the DKIM rule
// fitted on train scored 0.912 on train and 0.922 on test, the honest
// baseline's accuracy, so train taught the header as well as the task.
// Attackers sign their own look-alike domains and legitimate mail crosses
// lists, forwarders and internal relays, so no single verdict may come
// near the baseline, which reads the whole email.
func TestAuthVerdictShortcut(t *testing.T) {
	train := authRows(mustSplit(t, env.SplitTrain))
	test := authRows(miniRowsForTest(t))
	// The baseline reads the whole email, authentication included; no
	// header field alone may come within 0.2 of it, nor above 0.70.
	right := 0
	mini := miniRowsForTest(t)
	for _, r := range mini {
		if Classify(mail.Analyze(r.Email)).Label == r.Answer {
			right++
		}
	}
	baseline := float64(right) / float64(len(mini))
	bound := min(0.70, baseline-0.2)
	t.Logf("builtin:indicators on test: %.3f; bound %.3f", baseline, bound)
	for _, name := range slices.Sorted(maps.Keys(authFields)) {
		tr, te := oneFieldRule(authFields[name], train, test)
		t.Logf("one-field rule on %s: train %.3f, test %.3f", name, tr, te)
		if tr > bound || te > bound {
			t.Errorf("a rule on the %s verdict alone scores %.3f on train, %.3f on test (bound %.2f): the generator's authentication results encode the label", name, tr, te, bound)
		}
	}
	present := func(a mail.AuthResults) string {
		if a.SPF != "" || a.DKIM != "" || a.DMARC != "" {
			return "present"
		}
		return ""
	}
	tr, te := oneFieldRule(present, train, test)
	t.Logf("one-field rule on header presence: train %.3f, test %.3f", tr, te)
	if tr > bound || te > bound {
		t.Errorf("whether Authentication-Results is present scores %.3f on train, %.3f on test (bound %.2f)", tr, te, bound)
	}
}

// TestAuthSignals checks what the baseline reads from Authentication-
// Results: a pass counts for the sender only when it is for the From
// domain, and is trusted only when that domain is not a look-alike or
// free mail.
func TestAuthSignals(t *testing.T) {
	for _, tc := range []struct {
		name, from, auth       string
		aligned, trusted, pass bool
	}{
		{"aligned pass", "PayPal <service@paypal.com>", "spf=pass smtp.mailfrom=paypal.com; dkim=pass header.d=paypal.com; dmarc=pass header.from=paypal.com", true, true, true},
		{"pass without domains", "GitHub <noreply@github.com>", "spf=pass; dkim=pass; dmarc=pass", true, true, true},
		{"subdomain signs", "Google <no-reply@accounts.google.com>", "spf=pass smtp.mailfrom=bounce.google.com; dkim=pass header.d=google.com; dmarc=none", true, true, false},
		{"ESP signature", "Amazon <orders@amazon.de>", "spf=pass smtp.mailfrom=bounce-x@bounces.sendgrid.net; dkim=pass header.d=sendgrid.net; dmarc=none header.from=amazon.de", false, false, false},
		{"DMARC for another domain", "PayPal <service@paypal.com>", "spf=pass smtp.mailfrom=evil.com; dkim=pass header.d=evil.com; dmarc=pass header.from=evil.com", false, false, true},
		{"look-alike passes", "PayPal <security@paypa1-secure.com>", "spf=pass smtp.mailfrom=paypa1-secure.com; dkim=pass header.d=paypa1-secure.com; dmarc=pass header.from=paypa1-secure.com", true, false, true},
		{"free mail passes", "CEO <boss.office@gmail.com>", "spf=pass smtp.mailfrom=gmail.com; dkim=pass header.d=gmail.com; dmarc=pass header.from=gmail.com", true, false, true},
		{"list broke DKIM", "IT <it@northwind.com>", "spf=pass smtp.mailfrom=all-bounces@lists.northwind.com; dkim=fail (body hash did not verify) header.d=northwind.com; dmarc=pass header.from=northwind.com", true, true, false},
		{"failing hop wins", "Shop <a@shop.example.com>", "spf=pass smtp.mailfrom=shop.example.com; dkim=pass header.d=shop.example.com; dmarc=pass header.from=shop.example.com\r\nAuthentication-Results: mx2; dkim=fail header.d=shop.example.com; dmarc=fail header.from=shop.example.com", false, false, false},
		{"identity only", "Shop <a@shop.example.com>", "dkim=pass header.i=@mail.shop.example.com", true, true, false},
		{"no header", "IT <it@northwind.com>", "", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := "From: " + tc.from + "\r\nTo: a@northwind.com\r\n"
			if tc.auth != "" {
				raw += "Authentication-Results: mx; " + tc.auth + "\r\n"
			}
			s := mail.Analyze(raw + "Subject: x\r\n\r\nhello\r\n").Signals
			if s.AuthAligned != tc.aligned || s.AuthTrusted != tc.trusted || s.AuthPass != tc.pass {
				t.Errorf("aligned %v trusted %v pass %v, want %v %v %v", s.AuthAligned, s.AuthTrusted, s.AuthPass, tc.aligned, tc.trusted, tc.pass)
			}
		})
	}
}
