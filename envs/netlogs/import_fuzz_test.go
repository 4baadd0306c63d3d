package netlogs

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// FuzzImport feeds arbitrary bytes to every format: an import may fail, but
// never panic, and whatever it emits must be labelled Malicious or Benign.
func FuzzImport(f *testing.F) {
	f.Add(uint8(0), []byte(iot23Header+iot23Row(1, true)+iot23Row(2, false)))
	f.Add(uint8(1), []byte(strings.Join(cicColumns, ",")+"\n"+strings.Repeat("1,", len(cicColumns)-1)+"Web Attack \x96 XSS\n"))
	f.Add(uint8(2), []byte("id,dur,proto,service,state,spkts,dpkts,sbytes,dbytes,attack_cat,label\n1,0.1,tcp,-,FIN,1,1,1,1,Exploits,1\n"))
	f.Add(uint8(3), []byte("flow_duration,Protocol Type,HTTP,label\n1.0,6,1,BenignTraffic\n"))
	f.Add(uint8(4), []byte(nfHeader+"1.1.1.1,1,2.2.2.2,80,6,7,1,1,1,1,2,2,0,5,0,0,1,1,1,1,1,DoS\n"))
	f.Add(uint8(0), gzipBytes([]byte(iot23Header+iot23Row(3, true))))
	f.Add(uint8(4), []byte("\"IPV4_SRC_ADDR\",\"x\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		formats := ImportFormats()
		o := ImportOptions{Format: formats[int(which)%len(formats)], N: 10, Balance: 0.5, Seed: 1, MaxBadRows: 5}
		open := func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		res, err := ImportFrom(context.Background(), []string{"fuzz"}, o, open)
		if err != nil {
			return
		}
		for _, rows := range res.Splits {
			for _, r := range rows {
				row, ok := r.(Row)
				if !ok {
					t.Fatalf("row of type %T", r)
				}
				if a := row.Answer; a != LabelMalicious && a != LabelBenign {
					t.Fatalf("answer %q", a)
				}
			}
		}
	})
}
