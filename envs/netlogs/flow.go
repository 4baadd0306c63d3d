// Package netlogs is E1: network-log anomaly detection. One Zeek conn-style
// flow record (optionally with counters describing its source's recent
// activity) is shown to the model, which answers Malicious, Benign or Abstain
// with a confidence. Rewards come from comparing that answer with the label
// the generator or source dataset attached to the flow.
package netlogs

import (
	"strconv"
	"time"

	"github.com/svbench/svbench/dataset"
)

// Flow is one Zeek conn.log record plus optional windowed context. Optional
// numeric fields are pointers because Zeek writes "-" for values it did not
// observe (no payload seen, connection still open when the log rotated), and
// a missing value must stay distinguishable from a zero.
type Flow struct {
	// Timestamp is when the connection started; the zero time means unknown.
	Timestamp time.Time `json:"ts,omitzero"`
	// DeviceType is the asset class of the internal endpoint ("camera",
	// "workstation", "nas", …); empty means unknown.
	DeviceType string `json:"device_type,omitempty"`
	// Direction is "outbound", "inbound" or "internal" relative to the
	// monitored network; empty means unknown.
	Direction string `json:"direction,omitempty"`

	Proto   string `json:"proto"`
	Service string `json:"service,omitempty"` // Zeek's protocol detection; "" = "-"
	SrcIP   string `json:"src_ip"`
	SrcPort int    `json:"src_port"`
	DstIP   string `json:"dst_ip"`
	DstPort int    `json:"dst_port"`

	Duration  *float64 `json:"duration,omitempty"` // seconds
	OrigBytes *int64   `json:"orig_bytes,omitempty"`
	RespBytes *int64   `json:"resp_bytes,omitempty"`
	OrigPkts  *int64   `json:"orig_pkts,omitempty"`
	RespPkts  *int64   `json:"resp_pkts,omitempty"`
	ConnState string   `json:"conn_state,omitempty"` // S0, SF, REJ, RSTO, …
	History   string   `json:"history,omitempty"`    // Zeek history string, e.g. "ShADadFf"

	// Window summarises what the same source did around this flow; nil when
	// the record was seen in isolation.
	Window *Window `json:"window,omitempty"`
}

// Window holds per-source counters over the WindowSeconds preceding the flow,
// the aggregates a SOC analyst pulls up before judging a single record. Every
// counter is optional: collectors differ in what they keep.
type Window struct {
	Seconds int `json:"seconds"`
	// Conns is the number of connections the source opened.
	Conns *int `json:"conns,omitempty"`
	// DistinctDstPorts and DistinctDstHosts count fan-out (scans, worms).
	DistinctDstPorts *int `json:"distinct_dst_ports,omitempty"`
	DistinctDstHosts *int `json:"distinct_dst_hosts,omitempty"`
	// FailedAuth counts authentication failures (SSH, Telnet, SMB, HTTP 401)
	// the sensors attributed to the source.
	FailedAuth *int `json:"failed_auth,omitempty"`
	// RejectedRatio is the share of the source's connections that were
	// refused or unanswered (REJ, S0, RSTR before data).
	RejectedRatio *float64 `json:"rejected_ratio,omitempty"`
	// IntervalMean and IntervalCV describe inter-arrival times of the
	// source's connections to this destination: a low coefficient of
	// variation means machine-regular (beacons, pollers, cron jobs).
	IntervalMean *float64 `json:"interval_mean,omitempty"`
	IntervalCV   *float64 `json:"interval_cv,omitempty"`
	// BytesOut is the total the source sent to this destination in the window.
	BytesOut *int64 `json:"bytes_out,omitempty"`
}

// F64, I64 and Int make optional fields from literals.
func F64(v float64) *float64 { return &v }

// I64 returns a pointer to v.
func I64(v int64) *int64 { return &v }

// Int returns a pointer to v.
func Int(v int) *int { return &v }

// TotalBytes is orig+resp bytes when at least one side was recorded.
func (f Flow) TotalBytes() (int64, bool) {
	if f.OrigBytes == nil && f.RespBytes == nil {
		return 0, false
	}
	var t int64
	if f.OrigBytes != nil {
		t += *f.OrigBytes
	}
	if f.RespBytes != nil {
		t += *f.RespBytes
	}
	return t, true
}

// Hash identifies the flow for de-duplication: the 5-tuple plus the start
// time, so two records of the same connection collapse while repeated
// connections between the same endpoints (which differ in source port or
// time) stay distinct. 16 hex digits, as in the reference's meta.hash.
func (f Flow) Hash() string {
	ts := ""
	if !f.Timestamp.IsZero() {
		ts = strconv.FormatInt(f.Timestamp.UnixNano(), 10)
	}
	return dataset.HashKey(f.Proto, f.SrcIP, strconv.Itoa(f.SrcPort), f.DstIP, strconv.Itoa(f.DstPort), ts)
}

// Row is one dataset line in the reference's format. Answer is "Malicious"
// or "Benign"; loaders also accept the reference's integer 1/0.
type Row struct {
	ID       string         `json:"id,omitempty"`
	Question string         `json:"question"`
	Answer   string         `json:"answer"`
	Meta     map[string]any `json:"meta"`
}
