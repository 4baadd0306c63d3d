package netlogs

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/tabular"
)

var fixedNow = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func opts(format string, n int) ImportOptions {
	return ImportOptions{Format: format, N: n, Balance: 0.5, Seed: 1, MaxBadRows: 10, Now: fixedNow}
}

func rowsOf(t *testing.T, res *ImportResult, split string) []Row {
	t.Helper()
	var out []Row
	for _, r := range res.Splits[split] {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b) {
			t.Fatalf("row is not valid UTF-8: %q", b)
		}
		var row Row
		if err := json.Unmarshal(b, &row); err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
	return out
}

func TestImportIoT23(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "CTU-IoT-Malware-Capture-34-1", "bro", "conn.log.labeled")
	writeIoT23(t, path, 400, 300, 150, true)
	files, err := ExpandInputs(FormatIoT23, []string{dir})
	if err != nil || len(files) != 1 {
		t.Fatalf("ExpandInputs = %v, %v", files, err)
	}
	res, err := Import(context.Background(), files, opts(FormatIoT23, 200))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Card
	if c.Counts.Labels[LabelMalicious] != 100 || c.Counts.Labels[LabelBenign] != 100 {
		t.Errorf("labels %v, want 100/100", c.Counts.Labels)
	}
	if n := len(res.Splits["train"]); n != 140 || len(res.Splits["dev"]) != 30 || len(res.Splits["test"]) != 30 {
		t.Errorf("split sizes %d/%d/%d, want 140/30/30", n, len(res.Splits["dev"]), len(res.Splits["test"]))
	}
	data, _ := os.ReadFile(path)
	if c.Sources[0].SHA256 != fmt.Sprintf("%x", sha256.Sum256(data)) || c.Sources[0].Rows != 850 || c.Sources[0].BadRows != 0 {
		t.Errorf("source %+v", c.Sources[0])
	}
	if c.Dedup.Seen != 850 || !strings.HasPrefix(c.Dedup.Key, "5-tuple") {
		t.Errorf("dedup %+v", c.Dedup)
	}
	ids := map[string]bool{}
	for _, split := range dataset.SplitNames {
		for _, r := range rowsOf(t, res, split) {
			if ids[r.ID] {
				t.Fatalf("duplicate row %s", r.ID)
			}
			ids[r.ID] = true
			if r.Meta["scenario"] != "CTU-IoT-Malware-Capture-34-1" || r.Meta["split"] != split {
				t.Fatalf("meta %v", r.Meta)
			}
			fam := r.Meta["attack_family"]
			if (r.Answer == LabelMalicious && fam != "partofahorizontalportscan") || (r.Answer == LabelBenign && fam != "benign") {
				t.Fatalf("answer %s family %v", r.Answer, fam)
			}
			if !strings.Contains(r.Question, "src=192.168.1.") || !strings.HasSuffix(r.Question, Instruction) {
				t.Fatalf("question %q", r.Question)
			}
		}
	}
	// Deterministic; a gzip copy gives the same rows.
	gzPath := filepath.Join(dir, "gz", "CTU-IoT-Malware-Capture-34-1", "conn.log.labeled.gz")
	writeFile(t, gzPath, gzipBytes(data))
	res2, err := Import(context.Background(), []string{gzPath}, opts(FormatIoT23, 200))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(res.Splits)
	b, _ := json.Marshal(res2.Splits)
	if strings.ReplaceAll(string(b), ".gz", "") != string(a) {
		t.Error("gzip input produced different rows")
	}
	// The reference rendering is available.
	o := opts(FormatIoT23, 20)
	o.Render = "reference"
	res3, err := Import(context.Background(), files, o)
	if err != nil {
		t.Fatal(err)
	}
	if q := rowsOf(t, res3, "train")[0].Question; !strings.HasPrefix(q, "Device unknown-device observed tcp ") {
		t.Errorf("reference rendering: %q", q)
	}
}

func TestImportCICIDS2017(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "Thursday-WorkingHours-Morning-WebAttacks.pcap_ISCX.csv")
	writeCIC(t, path, 600, 1)
	o := opts(FormatCICIDS2017, 300)
	res, err := Import(context.Background(), []string{path}, o)
	if err != nil {
		t.Fatal(err)
	}
	fams := res.Card.Counts.Families
	for _, want := range []string{"benign", "dos-hulk", "portscan", "ddos", "web-attack-brute-force", "web-attack-xss", "web-attack-sql-injection"} {
		if fams[want] == 0 {
			t.Errorf("family %q missing from %v", want, fams)
		}
	}
	if !strings.HasPrefix(res.Card.Dedup.Key, "feature vector") {
		t.Errorf("CIC ML CSVs have no addresses; dedup key = %q", res.Card.Dedup.Key)
	}
	if !strings.Contains(strings.Join(res.Card.Notes, "\n"), "duplicate column") || !strings.Contains(strings.Join(res.Card.Notes, "\n"), "every field empty") {
		t.Errorf("notes %q", res.Card.Notes)
	}
	for _, r := range rowsOf(t, res, "train") {
		if !strings.Contains(r.Question, "dst=:") {
			t.Fatalf("question %q", r.Question)
		}
	}
}

func TestImportUNSWNB15(t *testing.T) {
	dir := t.TempDir()
	// Raw headerless file: 49 columns in the published order.
	var raw strings.Builder
	for i := 0; i < 200; i++ {
		cells := make([]string, len(unswRawColumns))
		for j := range cells {
			cells[j] = "0"
		}
		cells[0], cells[1], cells[2], cells[3] = "59.166.0.1", fmt.Sprint(1000+i), "149.171.126.6", "0x000c"
		cells[4], cells[5], cells[6], cells[13] = "tcp", "FIN", "0.5", "-"
		cells[28] = "1421927414"
		cells[47], cells[48] = "", "0"
		if i%2 == 0 {
			cells[47], cells[48] = []string{" Fuzzers ", "Backdoors", "Exploits"}[i%3], "1"
		}
		raw.WriteString(strings.Join(cells, ",") + "\n")
	}
	rawPath := filepath.Join(dir, "UNSW-NB15_1.csv")
	writeFile(t, rawPath, []byte(raw.String()))
	res, err := Import(context.Background(), []string{rawPath}, opts(FormatUNSWNB15, 100))
	if err != nil {
		t.Fatal(err)
	}
	if res.Card.Counts.Families["backdoor"] == 0 || res.Card.Counts.Families["fuzzers"] == 0 {
		t.Errorf("families %v", res.Card.Counts.Families)
	}
	r := rowsOf(t, res, "train")[0]
	if !strings.Contains(r.Question, "dst=149.171.126.6:12") || r.Meta["scenario"] != "UNSW-NB15_1" {
		t.Errorf("row %q %v", r.Question, r.Meta)
	}
	// Training/testing set: header, id column, no addresses.
	train := "id,dur,proto,service,state,spkts,dpkts,sbytes,dbytes,rate,attack_cat,label\n"
	for i := 0; i < 100; i++ {
		cat, lab := "Normal", "0"
		if i%2 == 1 {
			cat, lab = "Generic", "1"
		}
		train += fmt.Sprintf("%d,0.%d,udp,dns,INT,2,0,%d,0,1.5,%s,%s\n", i+1, i%10, 100+i%20, cat, lab)
	}
	tp := filepath.Join(dir, "UNSW_NB15_training-set.csv")
	writeFile(t, tp, []byte(train))
	res, err = Import(context.Background(), []string{tp}, opts(FormatUNSWNB15, 100))
	if err != nil {
		t.Fatal(err)
	}
	// 10 durations × 20 byte counts, id excluded: feature-vector duplicates collapse.
	if got := res.Card.Counts.Labels[LabelMalicious] + res.Card.Counts.Labels[LabelBenign]; got != 20 || res.Card.Dedup.Dropped != 80 {
		t.Errorf("rows %d, dropped %d; want 20 distinct feature vectors, 80 duplicates", got, res.Card.Dedup.Dropped)
	}
}

func TestImportCICIoT2023AndNetFlow(t *testing.T) {
	dir := t.TempDir()
	iot := "flow_duration,Header_Length,Protocol Type,Duration,Rate,HTTP,HTTPS,DNS,Tot sum,label\n"
	for i := 0; i < 60; i++ {
		l := []string{"BenignTraffic", "DDoS-ICMP_Flood", "Recon-PortScan"}[i%3]
		iot += fmt.Sprintf("%d.5,%d,6.0,64,%d,0,1,0,%d,%s\n", i, i*10, i, i*3, l)
	}
	p := filepath.Join(dir, "part-00000.csv")
	writeFile(t, p, []byte(iot))
	res, err := Import(context.Background(), []string{p}, opts(FormatCICIoT2023, 40))
	if err != nil {
		t.Fatal(err)
	}
	if res.Card.Counts.Families["ddos-icmp-flood"] == 0 || res.Card.Counts.Families["recon-portscan"] == 0 || res.Card.Counts.Labels[LabelBenign] == 0 {
		t.Errorf("counts %+v", res.Card.Counts)
	}
	if q := rowsOf(t, res, "train")[0].Question; !strings.Contains(q, "proto=tcp service=https") {
		t.Errorf("question %q", q)
	}

	nf := newFlowStream(300)
	nfPath := filepath.Join(dir, "NF-UNSW-NB15-v2.csv")
	b, _ := io.ReadAll(nf)
	writeFile(t, nfPath, b)
	res, err = Import(context.Background(), []string{nfPath}, opts(FormatNetFlowV2, 90))
	if err != nil {
		t.Fatal(err)
	}
	r := rowsOf(t, res, "train")[0]
	if !strings.Contains(r.Question, "history=SPAfsa") || !strings.Contains(r.Question, "service=http") {
		t.Errorf("netflow question %q", r.Question)
	}
}

func TestImportOOD(t *testing.T) {
	dir := t.TempDir()
	iot := filepath.Join(dir, "CTU-IoT-Malware-Capture-1-1", "conn.log.labeled")
	writeIoT23(t, iot, 300, 300, 0, true)
	cic := filepath.Join(dir, "cic.csv")
	writeCIC(t, cic, 400, 2)
	o := opts(FormatIoT23, 170)
	o.OODFrom, o.OODFormat = []string{cic}, FormatCICIDS2017
	res, err := Import(context.Background(), []string{iot}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Splits["test"]) != 30 || len(res.Splits["train"])+len(res.Splits["dev"]) != 170 {
		t.Errorf("sizes train %d dev %d test %d", len(res.Splits["train"]), len(res.Splits["dev"]), len(res.Splits["test"]))
	}
	for _, r := range rowsOf(t, res, "test") {
		if r.Meta["source"] != FormatCICIDS2017 {
			t.Fatalf("test row from %v", r.Meta["source"])
		}
	}
	for _, r := range rowsOf(t, res, "train") {
		if r.Meta["source"] != FormatIoT23 {
			t.Fatalf("train row from %v", r.Meta["source"])
		}
	}
	if len(res.Card.Sources) != 2 {
		t.Errorf("sources %+v", res.Card.Sources)
	}
}

func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "CTU-IoT-Malware-Capture-3-1", "conn.log.labeled")
	writeIoT23(t, good, 50, 50, 0, true)
	data, _ := os.ReadFile(good)
	gz := gzipBytes(data)

	cicHeader := strings.Join(cicColumns, ",")
	cases := []struct {
		name    string
		format  string
		content []byte
		maxBad  int
		wantErr []string // substrings of the error; nil = success
		check   func(t *testing.T, res *ImportResult)
	}{
		{name: "truncated gzip", format: FormatIoT23, content: gz[:len(gz)*2/3], wantErr: []string{"truncated", "re-download"}},
		{name: "truncated plain file", format: FormatIoT23, content: data[:len(data)-40], maxBad: 5, check: func(t *testing.T, res *ImportResult) {
			if len(res.BadRows) != 1 || !strings.Contains(strings.Join(res.Card.Notes, " "), "no #close trailer") {
				t.Errorf("bad rows %v notes %q", res.BadRows, res.Card.Notes)
			}
		}},
		{name: "wrong delimiter", format: FormatCICIDS2017, content: []byte(strings.ReplaceAll(cicHeader, ",", ";") + "\n1;2\n"), wantErr: []string{"wrong delimiter", "semicolon", "comma-separated"}},
		{name: "csv given as zeek", format: FormatIoT23, content: []byte("ts,uid\n1,2\n"), wantErr: []string{"not a Zeek log"}},
		{name: "missing columns", format: FormatNetFlowV2, content: []byte("IPV4_SRC_ADDR,L4_SRC_PORT,PROTOCOL,Label\n1.2.3.4,1,6,0\n"),
			wantErr: []string{"missing column(s)", `"IPV4_DST_ADDR"`, `"FLOW_DURATION_MILLISECONDS"`, "expected columns"}},
		{name: "malformed rows under the limit", format: FormatNetFlowV2, maxBad: 3,
			content: []byte(nfHeader + "1.1.1.1,1,2.2.2.2,80,6,7,1,1,1,1,2,2,0,5,0,0,1,1,1,1,0,Benign\n" +
				"1.1.1.1,1,2.2.2.2\n" + // line 3: too few fields
				"1.1.1.1,x,2.2.2.2,80,6,7,1,1,1,1,2,2,0,5,0,0,1,1,1,1,0,Benign\n" + // line 4: port not a number
				"1.1.1.1,2,2.2.2.2,80,6,7,1,1,1,1,2,2,0,5,0,0,1,1,1,1,7,Benign\n"), // line 5: label not 0/1
			check: func(t *testing.T, res *ImportResult) {
				var lines []int
				for _, b := range res.BadRows {
					lines = append(lines, b.Line)
				}
				if fmt.Sprint(lines) != "[3 4 5]" || res.Card.Sources[0].BadRows != 3 {
					t.Errorf("bad rows %v", res.BadRows)
				}
			}},
		{name: "malformed rows past the limit", format: FormatNetFlowV2, maxBad: 1,
			content: []byte(nfHeader + "a\nb\nc\n"), wantErr: []string{"more than 1 malformed rows", "--max-bad-rows", ":2: ", ":3: "}},
		{name: "non-UTF-8 bytes", format: FormatIoT23,
			content: []byte(strings.Replace(string(data), "192.168.1.7\t", "192.168.1.\xff\xfe\t", 1)), check: func(t *testing.T, res *ImportResult) {
				for _, split := range dataset.SplitNames {
					for _, r := range res.Splits[split] {
						b, _ := json.Marshal(r)
						if !utf8.Valid(b) {
							t.Fatalf("invalid UTF-8 in output %q", b)
						}
					}
				}
			}},
		{name: "empty file", format: FormatCICIDS2017, content: nil, wantErr: []string{"empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "input")
			writeFile(t, p, c.content)
			o := opts(c.format, 40)
			o.MaxBadRows = c.maxBad
			res, err := Import(context.Background(), []string{p}, o)
			if c.wantErr != nil {
				if err == nil {
					t.Fatalf("no error; want %q", c.wantErr)
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, res)
		})
	}
	var me *tabular.MissingColumnsError
	p := filepath.Join(dir, "x.csv")
	writeFile(t, p, []byte("a,b\n1,2\n"))
	if _, err := Import(context.Background(), []string{p}, opts(FormatCICIoT2023, 5)); !errors.As(err, &me) {
		t.Errorf("missing columns error type: %T %v", err, err)
	}
}

// heapBytes reads live heap without stopping the world.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func TestImportConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams ~50 MB")
	}
	const rows = 450_000 // ≈ 50 MB of NetFlow CSV, generated while read
	runtime.GC()
	base := heapBytes()
	var peak uint64
	stream := newFlowStream(rows)
	stream.onRead = func() {
		if h := heapBytes(); h > peak {
			peak = h
		}
	}
	open := func(string) (io.ReadCloser, error) { return stream, nil }
	res, err := ImportFrom(context.Background(), []string{"generated.csv"}, opts(FormatNetFlowV2, 2000), open)
	if err != nil {
		t.Fatal(err)
	}
	if res.Card.Sources[0].Rows != rows {
		t.Fatalf("read %d rows, want %d", res.Card.Sources[0].Rows, rows)
	}
	// Garbage accumulates between collections, so bound growth loosely but
	// far below the input size: holding the input would need >50 MB.
	const limit = 32 << 20
	if peak > base+limit {
		t.Errorf("heap peaked at %d MB over a %d MB baseline while streaming ~50 MB; want under %d MB growth",
			(peak-base)>>20, base>>20, limit>>20)
	}
	t.Logf("heap baseline %d MB, peak %d MB over %d rows", base>>20, peak>>20, rows)
}
