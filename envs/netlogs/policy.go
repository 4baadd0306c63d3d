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

func (r record) port() int {
	v := r["dst"]
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		p, _ := strconv.Atoi(v[i+1:])
		return p
	}
	return 0
}

func (r record) hour() (int, bool) {
	ts := r["ts"]
	if len(ts) < 13 || ts == "-" {
		return 0, false
	}
	h, err := strconv.Atoi(ts[11:13])
	return h, err == nil
}

var (
	infraDevices  = map[string]bool{"nas": true, "backup-appliance": true, "server": true, "database-server": true}
	pollerDevices = map[string]bool{"monitoring-server": true, "load-balancer": true}
	iotDevices    = map[string]bool{"camera": true, "dvr": true, "router": true, "smart-plug": true, "thermostat": true, "sensor-hub": true}
	oddPorts      = map[int]bool{21: true, 4444: true, 1337: true, 6667: true, 9001: true, 8080: true, 8443: true, 23231: true, 37215: true, 52869: true}
	telnetPorts   = map[int]bool{23: true, 2323: true, 23231: true, 37215: true, 52869: true}
	adminPorts    = map[int]bool{22: true, 135: true, 445: true, 3389: true, 5985: true}
	oneWayPorts   = map[int]bool{514: true, 162: true, 2055: true, 1900: true, 5353: true, 137: true}
)

// FeaturesDecide is a stronger analyst heuristic over the rich rendering:
// it adds up evidence from fan-out, failed logins, rejection rates,
// regularity, volume, port and asset type, then maps the total to a label
// and a confidence. On reference renderings it sees only ports and flags.
func FeaturesDecide(text string) (string, float64, string) {
	rec := parseRecord(text)
	if _, rich := rec["proto"]; !rich {
		return HeuristicDecide(text)
	}
	score := 0.0
	var why []string
	add := func(v float64, reason string) {
		score += v
		why = append(why, reason)
	}
	dev := rec["device"]
	port := rec.port()
	state := rec["conn_state"]
	dir := rec["direction"]
	origBytes, hasOrig := rec.num("orig_bytes")

	ports, hasPorts := rec.num("distinct_dst_ports")
	hosts, hasHosts := rec.num("distinct_dst_hosts")
	fails, hasFails := rec.num("failed_auth")
	rej, hasRej := rec.num("rejected_ratio")
	conns, hasConns := rec.num("conns")
	cv, hasCV := rec.num("interval_cv")
	out, hasOut := rec.num("bytes_out_to_dst")

	noHandshake := state == "S0" || state == "REJ" || state == "RSTOS0" || state == "SH" || state == "OTH"
	if hasPorts && ports >= 50 && (!hasRej || rej >= 0.5) {
		if dev == "vuln-scanner" {
			add(-3, "scan from the IT vulnerability scanner")
		} else {
			add(3, fmt.Sprintf("fan-out to %.0f ports", ports))
		}
	} else if hasPorts && ports >= 6 && noHandshake {
		add(1.5, "probing several ports")
	}
	if hasHosts && hosts >= 50 && telnetPorts[port] {
		add(3, "telnet sweep across many hosts")
	} else if hasHosts && hosts >= 10 && telnetPorts[port] && noHandshake {
		add(1.5, "telnet probes to several hosts")
	}
	if hasFails {
		switch {
		case fails >= 20:
			add(3, fmt.Sprintf("%.0f failed logins", fails))
		case fails >= 5:
			add(1.5, fmt.Sprintf("%.0f failed logins", fails))
		case fails >= 2 && (port == 22 || port == 443 || port == 80 || telnetPorts[port]) && dir != "internal":
			add(0.7, "repeated failed logins")
		case fails >= 2 && dir == "internal" && adminPorts[port]:
			add(0.7, "failed logins to an admin protocol inside the network")
		}
	}
	if hasHosts && hosts >= 10 && adminPorts[port] && dir == "internal" && !(hasPorts && ports >= 50) {
		add(2, fmt.Sprintf("internal fan-out to %.0f hosts over an admin protocol", hosts))
	}
	if rec["proto"] == "udp" && state == "S0" && oneWayPorts[port] {
		add(-1.5, "one-way UDP (logs, traps, discovery) never gets an answer")
	}
	if noHandshake && dir != "inbound" && hasPorts && ports <= 2 && hasHosts && hosts <= 2 && hasConns && conns <= 15 && (!hasFails || fails == 0) {
		add(-1, "a client retrying one unreachable service")
	}
	if hasConns && conns >= 1000 && hasRej && rej >= 0.8 && !(hasHosts && hosts > 20) {
		add(3, "connection flood")
	}
	if hasCV && cv <= 0.15 && dir == "outbound" {
		switch {
		case port == 123 || iotDevices[dev] && (port == 8883 || port == 1883 || port == 5683 || port == 443):
			add(-1, "regular timekeeping/telemetry")
		case pollerDevices[dev]:
			add(-1.5, "regular monitoring poll")
		case oddPorts[port]:
			add(2.5, "machine-regular check-ins on an unusual port")
		default:
			add(1.2, "machine-regular check-ins")
		}
	} else if hasCV && cv <= 0.1 && pollerDevices[dev] {
		add(-1.5, "regular monitoring poll")
	}
	if (hasOut && out >= 1e8 || hasOrig && origBytes >= 1e8) && dir == "inbound" {
		add(-0.5, "large transfer into the network")
	} else if hasOut && out >= 1e8 || hasOrig && origBytes >= 1e8 {
		h, hasHour := rec.hour()
		night := hasHour && h < 5
		switch {
		case infraDevices[dev] && night:
			add(-2, "large nightly upload from backup infrastructure")
		case infraDevices[dev]:
			add(-0.5, "large upload from a server")
		case oddPorts[port] || port == 21:
			add(3, "bulk upload on an unusual port")
		case dev == "workstation" || dev == "laptop":
			add(2, "bulk upload from an endpoint")
		default:
			add(0.8, "bulk upload")
		}
	}
	if rec["service"] == "dns" && hasOrig && origBytes >= 150 && hasConns && conns >= 200 {
		add(2.5, "oversized DNS queries at high rate (tunnelling)")
	}
	if score == 0 {
		switch {
		case telnetPorts[port] && noHandshake:
			add(1.2, "unanswered telnet probe")
		case noHandshake && dir == "inbound":
			add(0.8, "unanswered inbound probe")
		case oddPorts[port] && dir == "outbound":
			add(0.8, "outbound to an unusual port")
		case state == "SF":
			add(-1, "ordinary completed connection")
		}
	}
	p := 1 / (1 + math.Exp(-1.3*score))
	reason := strings.Join(why, "; ")
	if reason == "" {
		reason = "no signal"
	}
	switch {
	case p >= 0.5 && p-0.5 >= 0.1:
		return LabelMalicious, round2(p), reason
	case p < 0.5 && 0.5-p >= 0.1:
		return LabelBenign, round2(1 - p), reason
	}
	return LabelAbstain, 0.2, reason
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
