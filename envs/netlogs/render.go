package netlogs

import (
	"strconv"
	"strings"
	"time"
)

// Instruction ends every question, in the reference's wording so a model
// sees the same call to action in both renderings.
const Instruction = "Decide: Malicious or Benign (you may Abstain if unsure)."

// RenderRich is svbench's question text: every Zeek field as key=value, "-"
// for fields the sensor did not record (Zeek's own convention), then the
// source's windowed counters when present. The key=value layout is stable
// (the `features` baseline parses it) and compact enough for long evals.
func RenderRich(f Flow) string {
	var b strings.Builder
	b.Grow(512)
	b.WriteString("Zeek conn record (\"-\" = not recorded):\n")
	kv(&b, "ts", tsString(f.Timestamp))
	kv(&b, "device", dash(f.DeviceType))
	kv(&b, "direction", dash(f.Direction))
	b.WriteByte('\n')
	kv(&b, "proto", dash(f.Proto))
	kv(&b, "service", dash(f.Service))
	kv(&b, "src", f.SrcIP+":"+strconv.Itoa(f.SrcPort))
	kv(&b, "dst", f.DstIP+":"+strconv.Itoa(f.DstPort))
	b.WriteByte('\n')
	kv(&b, "duration", optF(f.Duration, 3))
	kv(&b, "orig_bytes", optI64(f.OrigBytes))
	kv(&b, "resp_bytes", optI64(f.RespBytes))
	kv(&b, "orig_pkts", optI64(f.OrigPkts))
	kv(&b, "resp_pkts", optI64(f.RespPkts))
	kv(&b, "conn_state", dash(f.ConnState))
	kv(&b, "history", dash(f.History))
	b.WriteByte('\n')
	if w := f.Window; w != nil {
		b.WriteString("Source activity in the preceding ")
		b.WriteString(strconv.Itoa(w.Seconds))
		b.WriteString("s:\n")
		kv(&b, "conns", optInt(w.Conns))
		kv(&b, "distinct_dst_ports", optInt(w.DistinctDstPorts))
		kv(&b, "distinct_dst_hosts", optInt(w.DistinctDstHosts))
		kv(&b, "failed_auth", optInt(w.FailedAuth))
		kv(&b, "rejected_ratio", optF(w.RejectedRatio, 2))
		kv(&b, "interval_mean_s", optF(w.IntervalMean, 1))
		kv(&b, "interval_cv", optF(w.IntervalCV, 2))
		kv(&b, "bytes_out_to_dst", optI64(w.BytesOut))
		b.WriteByte('\n')
	}
	b.WriteString(Instruction)
	return b.String()
}

// RenderReference reproduces the reference's thin one-line rendering:
// source port → destination port, duration, total bytes and the history
// flags, with "?" for anything missing.
func RenderReference(f Flow) string {
	dev := f.DeviceType
	if dev == "" {
		dev = "unknown-device"
	}
	dur := "?"
	if f.Duration != nil {
		dur = strconv.FormatFloat(*f.Duration, 'f', 6, 64)
	}
	bytes := "?"
	if t, ok := f.TotalBytes(); ok {
		bytes = strconv.FormatInt(t, 10)
	}
	proto := f.Proto
	if proto == "" {
		proto = "?"
	}
	return "Device " + dev + " observed " + proto + " " + strconv.Itoa(f.SrcPort) + "→" + strconv.Itoa(f.DstPort) +
		", duration " + dur + ", bytes " + bytes + ", flags [" + f.History + "]. " + Instruction
}

// Render picks a rendering by name: "rich" (default) or "reference".
func Render(f Flow, style string) (string, bool) {
	switch style {
	case "", "rich":
		return RenderRich(f), true
	case "reference":
		return RenderReference(f), true
	}
	return "", false
}

func kv(b *strings.Builder, k, v string) {
	if b.Len() > 0 {
		if last := b.String()[b.Len()-1]; last != '\n' {
			b.WriteByte(' ')
		}
	}
	b.WriteString(k)
	b.WriteByte('=')
	b.WriteString(v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func tsString(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func optF(p *float64, prec int) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', prec, 64)
}

func optI64(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func optInt(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}
