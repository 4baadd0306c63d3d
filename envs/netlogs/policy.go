package netlogs

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/svbench/svbench/env"
)

// Built-in policy names.
const (
	PolicyHeuristic = "heuristic"
	PolicyFeatures  = "features"
)

// Policy returns a built-in baseline. Both read only the last user message,
// as a model would.
func (e *Environment) Policy(name string) (env.Policy, bool) {
	var decide func(string) (string, float64, string)
	switch name {
	case PolicyHeuristic:
		decide = HeuristicDecide
	case PolicyFeatures:
		decide = FeaturesDecide
	default:
		return nil, false
	}
	return env.PolicyFunc(func(_ context.Context, conv []env.Message, _ []env.Tool) (env.Message, error) {
		label, conf, why := decide(lastUser(conv))
		return env.Message{Role: env.RoleAssistant, Content: answerJSON(label, conf, why)}, nil
	}), true
}

func lastUser(conv []env.Message) string {
	for i := len(conv) - 1; i >= 0; i-- {
		if conv[i].Role == env.RoleUser {
			return conv[i].Content
		}
	}
	return ""
}

func answerJSON(label string, conf float64, why string) string {
	return fmt.Sprintf(`{"label": %q, "confidence": %s, "rationale": %q}`, label, strconv.FormatFloat(conf, 'f', 2, 64), why)
}

var (
	heuristicBad  = []string{"TOR", "C2", "SYN_SCAN", "BRUTE", "AUTH_FAILED", "MALWARE", "BEACON", "PORTS="}
	heuristicGood = []string{"STATUS=OK", "AUTH_SUCCESS", "DNS", "ICMP"}
	dstPortRe     = regexp.MustCompile(`(?:→|->|dst=[^\s:]*:|dst_port=|port )(\d{1,5})`)
)

// HeuristicDecide is the reference's keyword-and-port baseline, kept for
// comparison: it matches keywords anywhere in the upper-cased text, then the
// destination port against fixed lists.
func HeuristicDecide(text string) (string, float64, string) {
	up := strings.ToUpper(text)
	for _, k := range heuristicBad {
		if strings.Contains(up, k) {
			return LabelMalicious, 0.8, "suspicious keyword " + k
		}
	}
	for _, k := range heuristicGood {
		if strings.Contains(up, k) {
			return LabelBenign, 0.6, "benign keyword " + k
		}
	}
	if m := dstPortRe.FindStringSubmatch(text); m != nil {
		switch m[1] {
		case "22", "23", "445", "3389", "4444", "9001", "5900":
			return LabelMalicious, 0.7, "risky destination port " + m[1]
		case "53", "80", "443":
			return LabelBenign, 0.55, "common service port " + m[1]
		}
	}
	return LabelAbstain, 0.3, "no signal"
}

// record is the key=value fields of a rich rendering.
type record map[string]string

func parseRecord(text string) record {
	rec := record{}
	for _, tok := range strings.Fields(text) {
		k, v, ok := strings.Cut(tok, "=")
		if !ok || k == "" {
			continue
		}
		rec[k] = v
	}
	return rec
}

// num returns a numeric field; ok is false when it is absent or "-".
func (r record) num(k string) (float64, bool) {
	v, ok := r[k]
	if !ok || v == "-" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

func (r record) hour() (int, bool) {
	ts := r["ts"]
	if len(ts) < 13 || ts == "-" {
		return 0, false
	}
	h, err := strconv.Atoi(ts[11:13])
	return h, err == nil
}

// The features baseline's reading thresholds: an analyst's round numbers,
// a little coarser than what the generator draws at its hardest level (a
// login target with two failures, a fan-out to six hosts), so it misreads
// or passes over some rows the record does decide.
const (
	featuresFailedLogins = 3
	featuresFanoutHosts  = 10
	featuresSweepPorts   = minSweepPorts
)

// Confidences of the features baseline's answers. A benign reading is
// wrong when an attack wore its activity's normal context (the disguised
// rows of the harder levels), which no reading of the record can see.
const (
	featuresConfidenceMalicious = 0.95
	featuresConfidenceBenign    = 0.9
)

// FeaturesDecide is an analyst's reading of the rich rendering against the
// site baseline the system prompt states (site.go): it names the activity
// from the source's counters (failed logins, ports swept, web hosts, upload
// volume, a timer's cadence), reads the two facts that activity's rule
// needs (the asset's role, the hour, the peer, the cadence) and answers by
// the rule. It abstains when the record shows no activity or not both
// facts: then it does not decide the flow. On reference renderings, which
// show no hour, peer or cadence, it falls back to the reference heuristic.
func FeaturesDecide(text string) (string, float64, string) {
	rec := parseRecord(text)
	if _, rich := rec["proto"]; !rich {
		return HeuristicDecide(text)
	}
	a, what := identifyActivity(rec)
	if a == nil {
		return LabelAbstain, 0, "no activity the site baseline covers is visible"
	}
	var vals [2]int
	for i, fc := range a.facts {
		vals[i] = readFact(rec, fc)
		if vals[i] == undecided {
			return LabelAbstain, 0, what + ", but the record does not show " + factNames[fc]
		}
	}
	sc := a.cells[vals[0]][vals[1]]
	if sc.malicious {
		return LabelMalicious, featuresConfidenceMalicious, what + " where the site baseline does not expect it"
	}
	return LabelBenign, featuresConfidenceBenign, what + " as the site baseline expects"
}

// identifyActivity names a record's activity from its counters, the most
// specific first; nil when none shows.
func identifyActivity(rec record) (*activity, string) {
	find := func(name string) *activity {
		for i := range activities {
			if activities[i].name == name {
				return &activities[i]
			}
		}
		panic("netlogs: no activity " + name)
	}
	fails, hasFails := rec.num("failed_auth")
	ports, hasPorts := rec.num("distinct_dst_ports")
	hosts, hasHosts := rec.num("distinct_dst_hosts")
	orig, hasOrig := rec.num("orig_bytes")
	out, hasOut := rec.num("bytes_out_to_dst")
	switch {
	case hasFails && fails >= featuresFailedLogins:
		return find("failed_logins"), fmt.Sprintf("%.0f failed logins", fails)
	case hasPorts && ports >= featuresSweepPorts:
		return find("port_sweep"), fmt.Sprintf("a sweep of %.0f ports", ports)
	case hasHosts && hosts >= featuresFanoutHosts:
		return find("web_fanout"), fmt.Sprintf("connections to %.0f web hosts", hosts)
	case hasOrig && orig >= bulkBytes || hasOut && out >= bulkBytes:
		return find("bulk_upload"), "a large upload"
	case hasFails && hasPorts && readFact(rec, factCadence) == cadenceRegular:
		return find("timer_checkin"), "check-ins on a timer"
	}
	return nil, ""
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
