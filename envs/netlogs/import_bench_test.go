package netlogs

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// genStream produces header + rows from gen on the fly, holding one chunk.
type genStream struct {
	header  string
	rows    int
	max     int
	buf     []byte
	off     int
	gen     func(dst []byte, i int) []byte
	onChunk func()
	bytes   int64
}

func (s *genStream) Read(p []byte) (int, error) {
	for s.off >= len(s.buf) {
		if s.rows >= s.max {
			return 0, io.EOF
		}
		if s.onChunk != nil {
			s.onChunk()
		}
		s.buf, s.off = s.buf[:0], 0
		if s.rows == 0 {
			s.buf = append(s.buf, s.header...)
		}
		for j := 0; j < 512 && s.rows < s.max; j++ {
			s.buf = s.gen(s.buf, s.rows)
			s.rows++
		}
	}
	n := copy(p, s.buf[s.off:])
	s.off += n
	s.bytes += int64(n)
	return n, nil
}

func (s *genStream) Close() error { return nil }

func cicGen() func([]byte, int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]string, 997) // varied rows, cheap to emit
	for i := range rows {
		l := cicLabels[0]
		if i%3 == 0 {
			l = cicLabels[1+i%(len(cicLabels)-1)]
		}
		rows[i] = cicRow(rng, l)
	}
	return func(dst []byte, i int) []byte {
		// Vary the port column so feature vectors differ (rows×ports are distinct enough).
		dst = fmt.Appendf(dst, "%d", i%65536)
		r := rows[i%len(rows)]
		return append(dst, r[strings.IndexByte(r, ','):]...)
	}
}

func nfGen() func([]byte, int) []byte {
	return func(dst []byte, i int) []byte {
		lab, att := "0", "Benign"
		if i%3 == 0 {
			lab, att = "1", "Exploits"
		}
		return fmt.Appendf(dst, "10.%d.%d.%d,%d,172.16.%d.%d,%d,6,7.0,%d,%d,%d,%d,27,26,19,%d,0,0,64,64,1500,40,%s,%s\n",
			i>>16&255, i>>8&255, i&255, 1024+i%60000, i%200, i%250, []int{80, 443, 22, 53}[i%4], 100+i%9000, 1+i%20, 200+i%7000, 1+i%15, i%4000, lab, att)
	}
}

func iotGen() func([]byte, int) []byte {
	return func(dst []byte, i int) []byte { return append(dst, iot23Row(i, i%2 == 0)...) }
}

// benchRows sizes the generated input: ~100 MB by default, several GB
// with SVBENCH_BIG=1.
func benchRows(bytesPerRow int) int {
	target := 100 << 20
	if os.Getenv("SVBENCH_BIG") == "1" {
		target = 5 << 30
	}
	return target / bytesPerRow
}

func benchImport(b *testing.B, format, header string, gen func() func([]byte, int) []byte) {
	// Measure a row's size to size the input.
	probe := gen()(nil, 12345)
	rows := benchRows(len(probe))
	var peak uint64
	var totalRows, totalBytes int64
	// The same generated stream read without importing: the baseline the
	// importer's cost is measured against.
	genStart, genCPU := time.Now(), cpuTime()
	if _, err := io.Copy(io.Discard, &genStream{header: header, max: rows, gen: gen()}); err != nil {
		b.Fatal(err)
	}
	genWall, genCPUUsed := time.Since(genStart).Seconds(), (cpuTime() - genCPU).Seconds()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for b.Loop() {
		s := &genStream{header: header, max: rows, gen: gen()}
		var n int
		s.onChunk = func() {
			if n++; n%16 == 0 {
				if h := heapBytes(); h > peak {
					peak = h
				}
			}
		}
		o := ImportOptions{Format: format, N: 10000, Balance: 0.5, Seed: 1, MaxBadRows: 0}
		res, err := ImportFrom(context.Background(), []string{"generated"}, o, func(string) (io.ReadCloser, error) { return s, nil })
		if err != nil {
			b.Fatal(err)
		}
		totalRows += res.Card.Sources[0].Rows
		totalBytes += s.bytes
	}
	el := time.Since(start).Seconds()
	cpu := (cpuTime() - cpu0).Seconds()
	b.ReportMetric(float64(totalRows)/el, "rows/s")
	// CPU seconds exclude time the shared machine gave to other processes;
	// subtracting the generator's own cost isolates the importer.
	iters := float64(totalRows) / float64(rows)
	b.ReportMetric(float64(totalRows)/cpu, "rows/cpu-s")
	if net := cpu - genCPUUsed*iters; net > 0 {
		b.ReportMetric(float64(totalRows)/net, "rows/cpu-s-excl-gen")
	}
	b.ReportMetric(el/(genWall*iters), "x-gen-only-wall")
	b.ReportMetric(float64(totalBytes)/el/1e6, "MB/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(rows), "rows/op")
	if rss := peakRSS(); rss > 0 {
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's high-water resident set (Linux VmHWM), 0 if
// unavailable.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			var kb uint64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}

func BenchmarkImportCICIDS2017(b *testing.B) {
	benchImport(b, FormatCICIDS2017, strings.Join(cicColumns, ",")+"\n", cicGen)
}

func BenchmarkImportNetFlowV2(b *testing.B) {
	benchImport(b, FormatNetFlowV2, nfHeader, nfGen)
}

func BenchmarkImportIoT23(b *testing.B) {
	benchImport(b, FormatIoT23, iot23Header, iotGen)
}
