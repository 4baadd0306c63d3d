package server

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// latencyBuckets span a cached E1 score (tens of µs) to a long rollout.
var latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; last is +Inf
	sum    float64
	n      uint64
}

func newHistogram() *histogram { return &histogram{counts: make([]uint64, len(latencyBuckets)+1)} }

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(latencyBuckets, v)
	h.counts[i]++
	h.sum += v
	h.n++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.sum += o.sum
	h.n += o.n
}

type reqKey struct{ endpoint, code string }
type envKey struct{ endpoint, env string }
type errKey struct{ endpoint, env, code string }

// metrics is a small Prometheus text-format registry: a fixed set of families
// whose label values come from the route table, the registry's environment
// ids and the server's error codes, so cardinality stays bounded whatever
// clients send.
type metrics struct {
	inflight atomic.Int64
	ready    atomic.Bool

	mu          sync.Mutex
	requests    map[reqKey]uint64
	reqLatency  map[string]*histogram
	items       map[envKey]uint64
	itemErrors  map[errKey]uint64
	itemLatency map[envKey]*histogram
}

func newMetrics() *metrics {
	return &metrics{
		requests:    map[reqKey]uint64{},
		reqLatency:  map[string]*histogram{},
		items:       map[envKey]uint64{},
		itemErrors:  map[errKey]uint64{},
		itemLatency: map[envKey]*histogram{},
	}
}

func (m *metrics) request(endpoint string, status int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[reqKey{endpoint, strconv.Itoa(status)}]++
	h := m.reqLatency[endpoint]
	if h == nil {
		h = newHistogram()
		m.reqLatency[endpoint] = h
	}
	h.observe(d.Seconds())
}

// batchStats collects per-item observations of one request without locking,
// so a 1024-item batch costs one lock acquisition, not 1024.
type batchStats struct {
	endpoint string
	items    map[string]uint64
	errors   map[[2]string]uint64
	latency  map[string]*histogram
}

func newBatchStats(endpoint string) *batchStats {
	return &batchStats{endpoint: endpoint, items: map[string]uint64{}, errors: map[[2]string]uint64{}, latency: map[string]*histogram{}}
}

func (b *batchStats) observe(envID string, d time.Duration, errCode string) {
	b.items[envID]++
	if errCode != "" {
		b.errors[[2]string{envID, errCode}]++
	}
	if d > 0 {
		h := b.latency[envID]
		if h == nil {
			h = newHistogram()
			b.latency[envID] = h
		}
		h.observe(d.Seconds())
	}
}

func (m *metrics) addBatch(b *batchStats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for e, n := range b.items {
		m.items[envKey{b.endpoint, e}] += n
	}
	for k, n := range b.errors {
		m.itemErrors[errKey{b.endpoint, k[0], k[1]}] += n
	}
	for e, h := range b.latency {
		k := envKey{b.endpoint, e}
		dst := m.itemLatency[k]
		if dst == nil {
			dst = newHistogram()
			m.itemLatency[k] = dst
		}
		dst.merge(h)
	}
}

// write renders the exposition format (version 0.0.4), followed by the
// families more renders (state kept elsewhere, such as the scoring queues).
func (m *metrics) write(w io.Writer, more ...func(*strings.Builder)) error {
	var b strings.Builder
	m.mu.Lock()
	family(&b, "svbench_http_requests_total", "counter", "HTTP requests by endpoint and status code.")
	for _, k := range sortedKeys(m.requests, func(k reqKey) string { return k.endpoint + "\x00" + k.code }) {
		sample(&b, "svbench_http_requests_total", labels("endpoint", k.endpoint, "code", k.code), float64(m.requests[k]))
	}
	family(&b, "svbench_http_request_duration_seconds", "histogram", "HTTP request latency by endpoint.")
	for _, ep := range sortedKeys(m.reqLatency, func(k string) string { return k }) {
		writeHistogram(&b, "svbench_http_request_duration_seconds", []string{"endpoint", ep}, m.reqLatency[ep])
	}
	family(&b, "svbench_items_total", "counter", "Items scored or rolled out, by endpoint and environment.")
	for _, k := range sortedKeys(m.items, func(k envKey) string { return k.endpoint + "\x00" + k.env }) {
		sample(&b, "svbench_items_total", labels("endpoint", k.endpoint, "env", k.env), float64(m.items[k]))
	}
	family(&b, "svbench_item_errors_total", "counter", "Items that failed, by endpoint, environment and error code.")
	for _, k := range sortedKeys(m.itemErrors, func(k errKey) string { return k.endpoint + "\x00" + k.env + "\x00" + k.code }) {
		sample(&b, "svbench_item_errors_total", labels("endpoint", k.endpoint, "env", k.env, "code", k.code), float64(m.itemErrors[k]))
	}
	family(&b, "svbench_item_duration_seconds", "histogram", "Per-item scoring or rollout latency, by endpoint and environment.")
	for _, k := range sortedKeys(m.itemLatency, func(k envKey) string { return k.endpoint + "\x00" + k.env }) {
		writeHistogram(&b, "svbench_item_duration_seconds", []string{"endpoint", k.endpoint, "env", k.env}, m.itemLatency[k])
	}
	m.mu.Unlock()
	family(&b, "svbench_inflight_requests", "gauge", "Requests being served now.")
	sample(&b, "svbench_inflight_requests", "", float64(m.inflight.Load()))
	family(&b, "svbench_ready", "gauge", "1 once every dataset is loaded.")
	r := 0.0
	if m.ready.Load() {
		r = 1
	}
	sample(&b, "svbench_ready", "", r)
	for _, f := range more {
		f(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeHistogram(b *strings.Builder, name string, lbl []string, h *histogram) {
	var cum uint64
	for i, ub := range latencyBuckets {
		cum += h.counts[i]
		sample(b, name+"_bucket", labels(append(append([]string(nil), lbl...), "le", formatFloat(ub))...), float64(cum))
	}
	cum += h.counts[len(latencyBuckets)]
	sample(b, name+"_bucket", labels(append(append([]string(nil), lbl...), "le", "+Inf")...), float64(cum))
	sample(b, name+"_sum", labels(lbl...), h.sum)
	sample(b, name+"_count", labels(lbl...), float64(h.n))
}

func family(b *strings.Builder, name, typ, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func sample(b *strings.Builder, name, lbl string, v float64) {
	b.WriteString(name)
	b.WriteString(lbl)
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
}

func labels(kv ...string) string {
	if len(kv) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(escapeLabel(kv[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func sortedKeys[K comparable, V any](m map[K]V, key func(K) string) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return key(ks[i]) < key(ks[j]) })
	return ks
}
