package netlogs

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/svbench/svbench/env"
)

// Fields implements env.FieldExtractor: the flow record a row's question
// shows, as the fields `svbench data validate` searches for label
// shortcuts. Addresses become their class (private, public, …) and the
// timestamp its hour, the forms in which a generator artefact would show;
// the destination port is kept with its protocol ("tcp/443") so it is read
// as a category, not a number. Both renderings are read; a question in
// neither gives nil.
func (e *Environment) Fields(ex env.Example) map[string]string {
	return RecordFields(lastUser(ex.Prompt))
}

// richFields are the rich rendering's fields kept as they are.
var richFields = []string{"device", "direction", "proto", "service", "duration", "orig_bytes", "resp_bytes", "orig_pkts", "resp_pkts",
	"conn_state", "history", "conns", "distinct_dst_ports", "distinct_dst_hosts", "failed_auth", "rejected_ratio",
	"interval_mean_s", "interval_cv", "bytes_out_to_dst"}

var refLine = regexp.MustCompile(`^Device (\S+) observed (\S+) (\d+)→(\d+), duration (\S+), bytes (\S+), flags \[([^\]]*)\]`)

// RecordFields parses a rendered flow record (rich or reference) into
// shortcut-analysis fields.
func RecordFields(text string) map[string]string {
	rec := parseRecord(text)
	if _, rich := rec["proto"]; rich {
		out := make(map[string]string, len(richFields)+5)
		for _, k := range richFields {
			if v, ok := rec[k]; ok {
				out[k] = v
			}
		}
		if h, ok := rec.hour(); ok {
			out["hour"] = strconv.Itoa(h)
		} else {
			out["hour"] = "-"
		}
		src, sport := splitHostPort(rec["src"])
		dst, dport := splitHostPort(rec["dst"])
		out["src_addr"], out["dst_addr"] = addrClass(src), addrClass(dst)
		out["src_port"] = sport
		out["dst_port"] = rec["proto"] + "/" + dport
		return out
	}
	m := refLine.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return nil
	}
	return map[string]string{"device": m[1], "proto": m[2], "src_port": m[3], "dst_port": m[2] + "/" + m[4],
		"duration": strings.Trim(m[5], "?"), "bytes": strings.Trim(m[6], "?"), "history": m[7]}
}

func splitHostPort(s string) (host, port string) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, "-"
	}
	return s[:i], s[i+1:]
}

// addrClass is what an address says without its digits.
func addrClass(s string) string {
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	switch {
	case err != nil:
		return "-"
	case a.IsPrivate():
		return "private"
	case a.IsLoopback():
		return "loopback"
	case a.IsMulticast():
		return "multicast"
	case a.IsLinkLocalUnicast():
		return "link-local"
	}
	return "public"
}
