package netlogs

import (
	"strings"
	"testing"
	"time"
)

func TestRenderReference(t *testing.T) {
	tests := []struct {
		name string
		f    Flow
		want string
	}{
		{
			name: "all missing",
			f:    Flow{Proto: "tcp", SrcPort: 6662, DstPort: 62336, History: "C"},
			want: "Device unknown-device observed tcp 6662→62336, duration ?, bytes ?, flags [C]. Decide: Malicious or Benign (you may Abstain if unsure).",
		},
		{
			name: "known fields",
			f: Flow{Proto: "udp", DeviceType: "camera", SrcPort: 32962, DstPort: 53, History: "Dd",
				Duration: F64(0.000741), OrigBytes: I64(40), RespBytes: I64(50)},
			want: "Device camera observed udp 32962→53, duration 0.000741, bytes 90, flags [Dd]. Decide: Malicious or Benign (you may Abstain if unsure).",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RenderReference(tt.f); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRenderRich(t *testing.T) {
	f := Flow{
		Timestamp: time.Date(2024, 5, 14, 2, 13, 7, 0, time.UTC), DeviceType: "nas", Direction: "outbound",
		Proto: "tcp", Service: "ssh", SrcIP: "10.0.4.17", SrcPort: 51544, DstIP: "203.0.113.9", DstPort: 22,
		Duration: F64(12.4), OrigBytes: I64(4231), ConnState: "SF", History: "ShAdDaFf",
		Window: &Window{Seconds: 300, Conns: Int(12), FailedAuth: Int(0), IntervalCV: F64(0.04)},
	}
	got := RenderRich(f)
	for _, want := range []string{
		"ts=2024-05-14T02:13:07Z device=nas direction=outbound",
		"proto=tcp service=ssh src=10.0.4.17:51544 dst=203.0.113.9:22",
		"duration=12.400 orig_bytes=4231 resp_bytes=- orig_pkts=- resp_pkts=- conn_state=SF history=ShAdDaFf",
		"Source activity in the preceding 300s:\nconns=12 distinct_dst_ports=- distinct_dst_hosts=- failed_auth=0",
		"interval_cv=0.04",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rich rendering lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, Instruction) {
		t.Errorf("rich rendering must end with the instruction:\n%s", got)
	}
	if noWin := RenderRich(Flow{Proto: "udp"}); strings.Contains(noWin, "Source activity") {
		t.Errorf("no window must render no window block:\n%s", noWin)
	}
}

func TestHash(t *testing.T) {
	a := Flow{Proto: "tcp", SrcIP: "10.0.0.1", SrcPort: 1, DstIP: "10.0.0.2", DstPort: 2}
	b := a
	b.Duration = F64(3) // non-identity fields do not change the hash
	c := a
	c.SrcPort = 3
	if a.Hash() != b.Hash() {
		t.Error("hash must depend on the 5-tuple and time only")
	}
	if a.Hash() == c.Hash() {
		t.Error("different source ports must hash differently")
	}
	if len(a.Hash()) != 16 {
		t.Errorf("hash %q is not 16 hex digits", a.Hash())
	}
}
