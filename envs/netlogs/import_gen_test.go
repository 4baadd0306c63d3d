package netlogs

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const iot23Header = "#separator \\x09\n#set_separator\t,\n#empty_field\t(empty)\n#unset_field\t-\n#path\tconn\n#open\t2019-01-01-00-00-00\n" +
	"#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tservice\tduration\torig_bytes\tresp_bytes\tconn_state\tlocal_orig\tlocal_resp\tmissed_bytes\thistory\torig_pkts\torig_ip_bytes\tresp_pkts\tresp_ip_bytes\ttunnel_parents   label   detailed-label\n" +
	"#types\ttime\tstring\taddr\tport\taddr\tport\tenum\tstring\tinterval\tcount\tcount\tstring\tbool\tbool\tcount\tstring\tcount\tcount\tcount\tcount\tset[string]   string   string\n"

// iot23Row writes a row the way the published files do: tabs, except runs
// of spaces before label and detailed-label.
func iot23Row(i int, malicious bool) string {
	label, detail, dport, svc, dur := "Benign", "-", 53, "dns", "0.010"
	if malicious {
		label, detail, dport, svc, dur = "Malicious", "PartOfAHorizontalPortScan", 23, "-", "-"
	}
	return fmt.Sprintf("%d.%06d\tC%08d\t192.168.1.%d\t%d\t10.0.%d.%d\t%d\ttcp\t%s\t%s\t0\t-\tS0\t-\t-\t0\tS\t1\t60\t0\t0\t-   %s   %s\n",
		1545000000+i, i%1000000, i, i%250, 30000+i%30000, (i/250)%250, i%250, dport, svc, dur, label, detail)
}

func writeIoT23(t testing.TB, path string, mal, ben, dups int, closeTrailer bool) {
	t.Helper()
	var b strings.Builder
	b.WriteString(iot23Header)
	for i := 0; i < mal; i++ {
		b.WriteString(iot23Row(i, true))
	}
	for i := 0; i < ben; i++ {
		b.WriteString(iot23Row(100000+i, false))
	}
	for i := 0; i < dups; i++ {
		b.WriteString(iot23Row(i, true))
	}
	if closeTrailer {
		b.WriteString("#close\t2019-01-01-01-00-00\n")
	}
	writeFile(t, path, []byte(b.String()))
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// cicHeader is CICFlowMeter's MachineLearningCSV header: 79 columns,
// leading spaces, "Fwd Header Length" twice.
var cicColumns = []string{" Destination Port", " Flow Duration", " Total Fwd Packets", " Total Backward Packets", "Total Length of Fwd Packets",
	" Total Length of Bwd Packets", " Fwd Packet Length Max", " Fwd Packet Length Min", " Fwd Packet Length Mean", " Fwd Packet Length Std",
	"Bwd Packet Length Max", " Bwd Packet Length Min", " Bwd Packet Length Mean", " Bwd Packet Length Std", "Flow Bytes/s", " Flow Packets/s",
	" Flow IAT Mean", " Flow IAT Std", " Flow IAT Max", " Flow IAT Min", "Fwd IAT Total", " Fwd IAT Mean", " Fwd IAT Std", " Fwd IAT Max",
	" Fwd IAT Min", "Bwd IAT Total", " Bwd IAT Mean", " Bwd IAT Std", " Bwd IAT Max", " Bwd IAT Min", "Fwd PSH Flags", " Bwd PSH Flags",
	" Fwd URG Flags", " Bwd URG Flags", " Fwd Header Length", " Bwd Header Length", "Fwd Packets/s", " Bwd Packets/s", " Min Packet Length",
	" Max Packet Length", " Packet Length Mean", " Packet Length Std", " Packet Length Variance", "FIN Flag Count", " SYN Flag Count",
	" RST Flag Count", " PSH Flag Count", " ACK Flag Count", " URG Flag Count", " CWE Flag Count", " ECE Flag Count", " Down/Up Ratio",
	" Average Packet Size", " Avg Fwd Segment Size", " Avg Bwd Segment Size", " Fwd Header Length", "Fwd Avg Bytes/Bulk", " Fwd Avg Packets/Bulk",
	" Fwd Avg Bulk Rate", " Bwd Avg Bytes/Bulk", " Bwd Avg Packets/Bulk", "Bwd Avg Bulk Rate", "Subflow Fwd Packets", " Subflow Fwd Bytes",
	" Subflow Bwd Packets", " Subflow Bwd Bytes", "Init_Win_bytes_forward", " Init_Win_bytes_backward", " act_data_pkt_fwd",
	" min_seg_size_forward", "Active Mean", " Active Std", " Active Max", " Active Min", "Idle Mean", " Idle Std", " Idle Max", " Idle Min", " Label"}

func cicRow(rng *rand.Rand, label string) string {
	cells := make([]string, len(cicColumns))
	cells[0] = strconv.Itoa(rng.IntN(65536))
	cells[1] = strconv.Itoa(rng.IntN(120_000_000))
	for i := 2; i < len(cells)-1; i++ {
		cells[i] = strconv.Itoa(rng.IntN(5000))
	}
	cells[14], cells[15] = "Infinity", "NaN" // as in the published files
	cells[len(cells)-1] = label
	return strings.Join(cells, ",") + "\n"
}

var cicLabels = []string{"BENIGN", "DoS Hulk", "PortScan", "DDoS", "Web Attack \x96 Brute Force", "Web Attack \uFFFD XSS", "Web Attack – Sql Injection"}

func writeCIC(t testing.TB, path string, rows int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString(strings.Join(cicColumns, ",") + "\n")
	for i := 0; i < rows; i++ {
		l := cicLabels[0]
		if i%2 == 1 {
			l = cicLabels[1+(i/2)%(len(cicLabels)-1)]
		}
		b.WriteString(cicRow(rng, l))
	}
	b.WriteString(strings.Repeat(",", len(cicColumns)-1) + "\n") // padding row of bare commas
	writeFile(t, path, []byte(b.String()))
}

// flowStream generates a NetFlow v2 CSV on the fly: size is unbounded in
// principle and nothing is held, so memory tests measure the importer only.
type flowStream struct {
	rows, max int
	buf       []byte
	off       int
	onRead    func()
	reads     int
}

const nfHeader = "IPV4_SRC_ADDR,L4_SRC_PORT,IPV4_DST_ADDR,L4_DST_PORT,PROTOCOL,L7_PROTO,IN_BYTES,IN_PKTS,OUT_BYTES,OUT_PKTS,TCP_FLAGS,CLIENT_TCP_FLAGS,SERVER_TCP_FLAGS,FLOW_DURATION_MILLISECONDS,DURATION_IN,DURATION_OUT,MIN_TTL,MAX_TTL,LONGEST_FLOW_PKT,SHORTEST_FLOW_PKT,Label,Attack\n"

func newFlowStream(rows int) *flowStream {
	return &flowStream{max: rows, buf: []byte(nfHeader)}
}

func (s *flowStream) Read(p []byte) (int, error) {
	s.reads++
	if s.onRead != nil && s.reads%64 == 0 {
		s.onRead()
	}
	for s.off >= len(s.buf) {
		if s.rows >= s.max {
			return 0, io.EOF
		}
		s.buf, s.off = s.buf[:0], 0
		for j := 0; j < 256 && s.rows < s.max; j++ {
			i := s.rows
			s.rows++
			lab, att := "0", "Benign"
			if i%3 == 0 {
				lab, att = "1", []string{"Exploits", "Reconnaissance", "DoS", "Fuzzers"}[i%4]
			}
			s.buf = fmt.Appendf(s.buf, "10.%d.%d.%d,%d,172.16.%d.%d,%d,6,7.0,%d,%d,%d,%d,27,26,19,%d,0,0,64,64,1500,40,%s,%s\n",
				i>>16&255, i>>8&255, i&255, 1024+i%60000, i%200, i%250, []int{80, 443, 22, 53}[i%4], 100+i%9000, 1+i%20, 200+i%7000, 1+i%15, i%4000, lab, att)
		}
	}
	n := copy(p, s.buf[s.off:])
	s.off += n
	return n, nil
}

func (s *flowStream) Close() error { return nil }
