package netlogs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/svbench/svbench/dataset/tabular"
)

// Format names accepted by --format.
const (
	FormatIoT23      = "iot23"
	FormatCICIDS2017 = "cicids2017"
	FormatUNSWNB15   = "unsw-nb15"
	FormatCICIoT2023 = "cic-iot2023"
	FormatNetFlowV2  = "netflow-v2"
)

// ImportFormats lists the supported source formats.
func ImportFormats() []string {
	return []string{FormatIoT23, FormatCICIDS2017, FormatUNSWNB15, FormatCICIoT2023, FormatNetFlowV2}
}

// unswRawColumns is the published UNSW-NB15 feature list (NUSW-NB15_features.csv),
// the column order of the four headerless UNSW-NB15_[1-4].csv files.
var unswRawColumns = strings.Split("srcip,sport,dstip,dsport,proto,state,dur,sbytes,dbytes,sttl,dttl,sloss,dloss,service,Sload,Dload,Spkts,Dpkts,swin,dwin,stcpb,dtcpb,smeansz,dmeansz,trans_depth,res_bdy_len,Sjit,Djit,Stime,Ltime,Sintpkt,Dintpkt,tcprtt,synack,ackdat,is_sm_ips_ports,ct_state_ttl,ct_flw_http_mthd,is_ftp_login,ct_ftp_cmd,ct_srv_src,ct_srv_dst,ct_dst_ltm,ct_src_ltm,ct_src_dport_ltm,ct_dst_sport_ltm,ct_dst_src_ltm,attack_cat,Label", ",")

// schema binds one file's columns to Flow fields. Column indices are -1
// when the source lacks the field.
type schema struct {
	format string
	ncols  int

	ts, srcIP, srcPort, dstIP, dstPort, proto, service int
	duration, origBytes, respBytes, origPkts, respPkts int
	connState, history, clientFlags, serverFlags, l7   int
	label, category                                    int

	durScale     float64 // multiply the duration column to get seconds
	protoNumeric bool    // IANA protocol numbers instead of names
	// serviceCols are CIC-IoT-2023's 0/1 indicator columns.
	serviceCols map[int]string
	// tupleKey de-duplicates by 5-tuple; otherwise by the feature vector
	// (every column except keyExclude), for sources without addresses.
	tupleKey   bool
	keyExclude map[int]bool
	// numeric columns are syntax-checked on every row, so malformed rows
	// are counted even when the sampler skips them.
	numeric []int
	norm    func(label, category string) (SourceLabel, error)
}

func newSchema(format string, n int) *schema {
	s := &schema{format: format, ncols: n, durScale: 1, keyExclude: map[int]bool{}}
	for _, p := range []*int{&s.ts, &s.srcIP, &s.srcPort, &s.dstIP, &s.dstPort, &s.proto, &s.service,
		&s.duration, &s.origBytes, &s.respBytes, &s.origPkts, &s.respPkts, &s.connState, &s.history,
		&s.clientFlags, &s.serverFlags, &s.l7, &s.label, &s.category} {
		*p = -1
	}
	return s
}

func (s *schema) finish() *schema {
	for _, c := range []int{s.srcPort, s.dstPort, s.duration, s.origBytes, s.respBytes, s.origPkts, s.respPkts, s.clientFlags, s.serverFlags} {
		if c >= 0 {
			s.numeric = append(s.numeric, c)
		}
	}
	s.keyExclude[s.label] = true
	if s.category >= 0 {
		s.keyExclude[s.category] = true
	}
	return s
}

// bind maps a header to a schema for the format, or says which columns are
// missing.
func bind(format, file string, h *tabular.Header) (*schema, error) {
	s := newSchema(format, len(h.Names))
	switch format {
	case FormatIoT23:
		if err := h.Require(file, "IoT-23 conn.log.labeled", []string{"ts"}, []string{"id.orig_h"}, []string{"id.orig_p"},
			[]string{"id.resp_h"}, []string{"id.resp_p"}, []string{"proto"}, []string{"label"}, []string{"detailed-label"}); err != nil {
			return nil, err
		}
		s.ts, s.srcIP, s.srcPort, s.dstIP, s.dstPort = h.Index("ts"), h.Index("id.orig_h"), h.Index("id.orig_p"), h.Index("id.resp_h"), h.Index("id.resp_p")
		s.proto, s.service, s.duration = h.Index("proto"), h.Index("service"), h.Index("duration")
		s.origBytes, s.respBytes, s.origPkts, s.respPkts = h.Index("orig_bytes"), h.Index("resp_bytes"), h.Index("orig_pkts"), h.Index("resp_pkts")
		s.connState, s.history = h.Index("conn_state"), h.Index("history")
		s.label, s.category = h.Index("label"), h.Index("detailed-label")
		s.tupleKey = true
		s.norm = normIoT23
	case FormatCICIDS2017:
		if err := h.Require(file, "CIC-IDS-2017 CICFlowMeter CSV", []string{"Destination Port", "Dst Port"}, []string{"Flow Duration"},
			[]string{"Total Fwd Packets", "Tot Fwd Pkts"}, []string{"Total Backward Packets", "Tot Bwd Pkts"},
			[]string{"Total Length of Fwd Packets", "TotLen Fwd Pkts"}, []string{"Total Length of Bwd Packets", "TotLen Bwd Pkts"}, []string{"Label"}); err != nil {
			return nil, err
		}
		s.dstPort, s.duration = h.Index("Destination Port", "Dst Port"), h.Index("Flow Duration")
		s.origPkts, s.respPkts = h.Index("Total Fwd Packets", "Tot Fwd Pkts"), h.Index("Total Backward Packets", "Tot Bwd Pkts")
		s.origBytes, s.respBytes = h.Index("Total Length of Fwd Packets", "TotLen Fwd Pkts"), h.Index("Total Length of Bwd Packets", "TotLen Bwd Pkts")
		s.srcIP, s.srcPort, s.dstIP = h.Index("Source IP", "Src IP"), h.Index("Source Port", "Src Port"), h.Index("Destination IP", "Dst IP")
		s.proto, s.label = h.Index("Protocol"), h.Index("Label")
		s.durScale, s.protoNumeric = 1e-6, true // CICFlowMeter durations are microseconds
		// The GeneratedLabelledFlows files carry addresses; the
		// MachineLearningCSV files do not and are keyed by features.
		s.tupleKey = s.srcIP >= 0 && s.dstIP >= 0 && s.srcPort >= 0 && s.proto >= 0
		for _, c := range []string{"Flow ID", "Timestamp"} {
			if i := h.Index(c); i >= 0 {
				s.keyExclude[i] = true
			}
		}
		s.norm = func(l, _ string) (SourceLabel, error) { return normNamed(l) }
	case FormatUNSWNB15:
		if h.Has("srcip") {
			if err := h.Require(file, "UNSW-NB15 raw CSV", []string{"srcip"}, []string{"sport"}, []string{"dstip"}, []string{"dsport"},
				[]string{"proto"}, []string{"dur"}, []string{"sbytes"}, []string{"dbytes"}, []string{"attack_cat"}, []string{"Label"}); err != nil {
				return nil, err
			}
			s.srcIP, s.srcPort, s.dstIP, s.dstPort = h.Index("srcip"), h.Index("sport"), h.Index("dstip"), h.Index("dsport")
			s.ts = h.Index("Stime")
			s.origPkts, s.respPkts = h.Index("Spkts"), h.Index("Dpkts")
			s.tupleKey = true
		} else {
			if err := h.Require(file, "UNSW-NB15 training/testing CSV", []string{"proto"}, []string{"dur"}, []string{"sbytes"}, []string{"dbytes"},
				[]string{"spkts"}, []string{"dpkts"}, []string{"attack_cat"}, []string{"label"}); err != nil {
				return nil, err
			}
			s.origPkts, s.respPkts = h.Index("spkts"), h.Index("dpkts")
			if i := h.Index("id"); i >= 0 {
				s.keyExclude[i] = true // a row number, not a feature
			}
		}
		s.proto, s.service, s.connState, s.duration = h.Index("proto"), h.Index("service"), h.Index("state"), h.Index("dur")
		s.origBytes, s.respBytes = h.Index("sbytes"), h.Index("dbytes")
		s.label, s.category = h.Index("label"), h.Index("attack_cat")
		s.norm = normBinary
	case FormatCICIoT2023:
		if err := h.Require(file, "CIC-IoT-2023 CSV", []string{"flow_duration"}, []string{"Protocol Type"}, []string{"label"}); err != nil {
			return nil, err
		}
		s.duration, s.proto, s.label = h.Index("flow_duration"), h.Index("Protocol Type"), h.Index("label")
		s.protoNumeric = true
		s.serviceCols = map[int]string{}
		for _, svc := range []string{"HTTP", "HTTPS", "DNS", "Telnet", "SMTP", "SSH", "IRC", "DHCP"} {
			if i := h.Index(svc); i >= 0 {
				s.serviceCols[i] = strings.ToLower(svc)
			}
		}
		s.norm = func(l, _ string) (SourceLabel, error) { return normNamed(l) }
	case FormatNetFlowV2:
		if err := h.Require(file, "NetFlow v2 (NF-*-v2) CSV", []string{"IPV4_SRC_ADDR"}, []string{"L4_SRC_PORT"}, []string{"IPV4_DST_ADDR"},
			[]string{"L4_DST_PORT"}, []string{"PROTOCOL"}, []string{"IN_BYTES"}, []string{"OUT_BYTES"}, []string{"IN_PKTS"}, []string{"OUT_PKTS"},
			[]string{"FLOW_DURATION_MILLISECONDS"}, []string{"Label"}, []string{"Attack"}); err != nil {
			return nil, err
		}
		s.srcIP, s.srcPort, s.dstIP, s.dstPort = h.Index("IPV4_SRC_ADDR"), h.Index("L4_SRC_PORT"), h.Index("IPV4_DST_ADDR"), h.Index("L4_DST_PORT")
		s.proto, s.l7 = h.Index("PROTOCOL"), h.Index("L7_PROTO")
		s.origBytes, s.respBytes, s.origPkts, s.respPkts = h.Index("IN_BYTES"), h.Index("OUT_BYTES"), h.Index("IN_PKTS"), h.Index("OUT_PKTS")
		s.duration, s.durScale = h.Index("FLOW_DURATION_MILLISECONDS"), 1e-3
		s.clientFlags, s.serverFlags = h.Index("CLIENT_TCP_FLAGS"), h.Index("SERVER_TCP_FLAGS")
		if s.clientFlags < 0 {
			s.clientFlags = h.Index("TCP_FLAGS")
		}
		s.label, s.category = h.Index("Label"), h.Index("Attack")
		s.protoNumeric, s.tupleKey = true, true
		s.norm = normBinary
	default:
		return nil, fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(ImportFormats(), ", "))
	}
	return s.finish(), nil
}

// missing reports Zeek's "-", empty cells and CICFlowMeter's Infinity/NaN.
func missing(b []byte) bool {
	switch string(b) {
	case "", "-", "Infinity", "-Infinity", "inf", "NaN", "nan":
		return true
	}
	return false
}

// isNumber is a cheap syntax check (digits, sign, point, exponent, hex
// ports such as UNSW-NB15's "0x000c") run on every row.
func isNumber(b []byte) bool {
	if missing(b) {
		return true
	}
	b = trimSpace(b)
	if len(b) == 0 {
		return true
	}
	digits := 0
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '-' || c == '+':
			if i != 0 && b[i-1] != 'e' && b[i-1] != 'E' {
				return false
			}
		case c == '.' || c == 'e' || c == 'E' || c == 'x' || c == 'X' || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'):
		default:
			return false
		}
	}
	return digits > 0
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func cell(fields [][]byte, i int) []byte {
	if i < 0 || i >= len(fields) {
		return nil
	}
	return trimSpace(fields[i])
}

func text(fields [][]byte, i int) string {
	b := cell(fields, i)
	if missing(b) {
		return ""
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func cellFloat(fields [][]byte, i int, scale float64, name string) (*float64, error) {
	b := cell(fields, i)
	if missing(b) {
		return nil, nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("column %q: %q is not a number", name, cellExcerpt(string(b)))
	}
	v *= scale
	return &v, nil
}

func cellInt(fields [][]byte, i int, name string) (*int64, error) {
	b := cell(fields, i)
	if missing(b) {
		return nil, nil
	}
	if v, err := strconv.ParseInt(string(b), 0, 64); err == nil {
		return &v, nil
	}
	// Some exports write counts as floats ("12.0").
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return nil, fmt.Errorf("column %q: %q is not an integer", name, cellExcerpt(string(b)))
	}
	v := int64(f)
	return &v, nil
}

func port(fields [][]byte, i int, name string) (int, error) {
	p, err := cellInt(fields, i, name)
	if err != nil || p == nil {
		return 0, err
	}
	if *p < 0 || *p > 65535 {
		return 0, fmt.Errorf("column %q: port %d out of range", name, *p)
	}
	return int(*p), nil
}

var ianaProto = map[string]string{"1": "icmp", "2": "igmp", "6": "tcp", "17": "udp", "47": "gre", "50": "esp", "58": "icmp6", "132": "sctp"}

// nDPI application ids NetFlow v2 exports in L7_PROTO, for the services a
// Zeek sensor would also name.
var ndpiService = map[string]string{"5": "dns", "7": "http", "91": "ssl", "92": "ssh", "1": "ftp", "3": "smtp", "9": "ntp", "16": "dhcp", "77": "telnet", "65": "irc"}

func protoName(b []byte, numeric bool) string {
	if missing(b) {
		return ""
	}
	s := string(b)
	if numeric {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			s = strconv.Itoa(int(math.Round(f)))
		}
		if n, ok := ianaProto[s]; ok {
			return n
		}
		return s
	}
	return strings.ToLower(strings.ToValidUTF8(s, "\uFFFD"))
}

// tcpFlags renders a cumulative TCP flag byte as Zeek-like history letters
// (upper case for the originator, lower for the responder). NetFlow records
// flag sets, not order, so this is the set of flags seen, in a fixed order.
func tcpFlags(v int64, orig bool) string {
	const letters = "FSRPAU"
	var b strings.Builder
	for bit := 0; bit < 6; bit++ {
		if v&(1<<bit) != 0 {
			c := letters[bit]
			if !orig {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// flow builds the E1 record from a row.
func (s *schema) flow(fields [][]byte, h *tabular.Header) (Flow, error) {
	name := func(i int) string {
		if i >= 0 && i < len(h.Names) {
			return h.Names[i]
		}
		return "?"
	}
	var f Flow
	var err error
	if s.ts >= 0 {
		t, err := cellFloat(fields, s.ts, 1, name(s.ts))
		if err != nil {
			return f, err
		}
		if t != nil && *t > 0 {
			sec, frac := math.Modf(*t)
			f.Timestamp = time.Unix(int64(sec), int64(frac*1e9)).UTC()
		}
	}
	f.Proto = protoName(cell(fields, s.proto), s.protoNumeric)
	f.Service = text(fields, s.service)
	if s.l7 >= 0 && f.Service == "" {
		b := cell(fields, s.l7)
		if v, err := strconv.ParseFloat(string(b), 64); err == nil {
			f.Service = ndpiService[strconv.Itoa(int(v))]
		}
	}
	for i, svc := range s.serviceCols {
		if v, err := strconv.ParseFloat(string(cell(fields, i)), 64); err == nil && v >= 0.5 {
			f.Service = svc
			break
		}
	}
	f.SrcIP, f.DstIP = text(fields, s.srcIP), text(fields, s.dstIP)
	if f.SrcPort, err = port(fields, s.srcPort, name(s.srcPort)); err != nil {
		return f, err
	}
	if f.DstPort, err = port(fields, s.dstPort, name(s.dstPort)); err != nil {
		return f, err
	}
	if s.duration >= 0 {
		if f.Duration, err = cellFloat(fields, s.duration, s.durScale, name(s.duration)); err != nil {
			return f, err
		}
		if f.Duration != nil && *f.Duration < 0 {
			f.Duration = nil // CICFlowMeter writes negative durations for clock glitches
		}
	}
	for _, c := range []struct {
		col int
		dst **int64
	}{{s.origBytes, &f.OrigBytes}, {s.respBytes, &f.RespBytes}, {s.origPkts, &f.OrigPkts}, {s.respPkts, &f.RespPkts}} {
		if c.col >= 0 {
			if *c.dst, err = cellInt(fields, c.col, name(c.col)); err != nil {
				return f, err
			}
		}
	}
	f.ConnState = text(fields, s.connState)
	f.History = text(fields, s.history)
	if s.clientFlags >= 0 {
		var hist string
		for _, c := range []struct {
			col  int
			orig bool
		}{{s.clientFlags, true}, {s.serverFlags, false}} {
			if c.col < 0 {
				continue
			}
			v, err := cellInt(fields, c.col, name(c.col))
			if err != nil {
				return f, err
			}
			if v != nil {
				hist += tcpFlags(*v, c.orig)
			}
		}
		if f.Proto == "tcp" {
			f.History = hist
		}
	}
	return f, nil
}

// key is the de-duplication identity of a row, appended to dst.
func (s *schema) key(dst []byte, fields [][]byte) []byte {
	if s.tupleKey {
		for _, c := range []int{s.proto, s.srcIP, s.srcPort, s.dstIP, s.dstPort} {
			dst = append(dst, cell(fields, c)...)
			dst = append(dst, 0)
		}
		return dst
	}
	for i, f := range fields {
		if s.keyExclude[i] {
			continue
		}
		dst = append(dst, trimSpace(f)...)
		dst = append(dst, 0)
	}
	return dst
}

// KeyDescription names the dedup identity for cards.
func (s *schema) keyDescription() string {
	if s.tupleKey {
		return "5-tuple (proto, src ip, src port, dst ip, dst port)"
	}
	return "feature vector (every column except label, attack category and row ids; the source has no addresses)"
}
