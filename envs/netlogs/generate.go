package netlogs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// GeneratorVersion is recorded in every synthetic row's meta; bump it when
// the generator's output for a given seed changes.
//
// synth-2 (issue #23) draws direction, address class and connection state
// for both classes from overlapping distributions (benign inbound services,
// benign failed and one-way connections, attacks that complete their
// handshakes) and derives the Zeek history from the connection state, so
// no single field or pair of fields gives the label away; synth-1 had
// every inbound flow and every public source malicious.
const GeneratorVersion = "synth-3"

// Difficulty levels. "mixed" draws each row's level uniformly.
const (
	DifficultyEasy   = "easy"
	DifficultyMedium = "medium"
	DifficultyHard   = "hard"
	DifficultyMixed  = "mixed"
)

// GenerateOptions configure Generate.
type GenerateOptions struct {
	N          int
	Seed       uint64
	Difficulty string // easy, medium, hard or mixed ("" = mixed)
	Render     string // "rich" (default) or "reference"
}

// scenario is one traffic pattern: a benign service or an attack playbook.
type scenario struct {
	name      string
	malicious bool
	family    string // attack family; "none" for benign traffic
	// lookalike marks benign traffic built to resemble an attack (or an
	// attack built to resemble normal traffic); weighted up as difficulty rises.
	lookalike bool
	gen       func(g *gen) Flow
}

// weight of a scenario at a difficulty level (0 easy, 1 medium, 2 hard).
func (s scenario) weight(level int) float64 {
	if s.lookalike {
		return [3]float64{0, 0.6, 2.0}[level]
	}
	return 1
}

var scenarios = []scenario{
	{name: "web_browsing", family: "none", gen: genWeb},
	{name: "dns_lookup", family: "none", gen: genDNS},
	{name: "ntp_sync", family: "none", gen: genNTP},
	{name: "software_update", family: "none", gen: genUpdate},
	{name: "video_streaming", family: "none", gen: genStreaming},
	{name: "ssh_admin", family: "none", gen: genSSHAdmin},
	{name: "iot_telemetry", family: "none", gen: genTelemetry},
	{name: "mail", family: "none", gen: genMail},
	{name: "nightly_backup", family: "none", lookalike: true, gen: genBackup},
	{name: "health_check_poller", family: "none", lookalike: true, gen: genHealthCheck},
	{name: "it_vulnerability_scan", family: "none", lookalike: true, gen: genITScan},
	{name: "public_web_server", family: "none", gen: genPublicWeb},
	{name: "inbound_mail", family: "none", gen: genInboundMail},
	{name: "remote_access", family: "none", gen: genRemoteAccess},
	{name: "failed_connection", family: "none", gen: genFailedConn},
	{name: "udp_one_way", family: "none", gen: genOneWayUDP},

	{name: "port_scan", malicious: true, family: "reconnaissance", gen: genPortScan},
	{name: "slow_port_scan", malicious: true, family: "reconnaissance", lookalike: true, gen: genSlowScan},
	{name: "ssh_bruteforce", malicious: true, family: "brute_force", gen: genSSHBrute},
	{name: "telnet_bruteforce", malicious: true, family: "brute_force", gen: genTelnetBrute},
	{name: "c2_beacon", malicious: true, family: "command_and_control", gen: genBeacon},
	{name: "syn_flood", malicious: true, family: "denial_of_service", gen: genFlood},
	{name: "exfiltration", malicious: true, family: "exfiltration", gen: genExfil},
	{name: "low_and_slow_exfiltration", malicious: true, family: "exfiltration", lookalike: true, gen: genSlowExfil},
	{name: "iot_botnet_scan", malicious: true, family: "botnet", gen: genMirai},
	{name: "credential_stuffing", malicious: true, family: "brute_force", gen: genCredStuffing},
	{name: "lateral_movement", malicious: true, family: "lateral_movement", gen: genLateral},
}

// gen carries the random source and the row's difficulty.
type gen struct {
	r     *rand.Rand
	level int // 0 easy, 1 medium, 2 hard
}

// Generate produces N labelled flows, half malicious (the odd one benign),
// deterministically for a seed: the same options give byte-identical rows
// on every machine.
func Generate(opts GenerateOptions) ([]Row, error) {
	if opts.N <= 0 {
		return nil, fmt.Errorf("generate: N must be positive, got %d", opts.N)
	}
	if opts.N > 10_000_000 {
		return nil, fmt.Errorf("generate: N %d is larger than the 10,000,000 supported", opts.N)
	}
	levels, err := levelsFor(opts.Difficulty)
	if err != nil {
		return nil, err
	}
	if _, ok := Render(Flow{}, opts.Render); !ok {
		return nil, fmt.Errorf("generate: unknown rendering %q (want rich or reference)", opts.Render)
	}
	r := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed_e1f1_0000_0001))
	var benign, malicious []scenario
	for _, s := range scenarios {
		if s.malicious {
			malicious = append(malicious, s)
		} else {
			benign = append(benign, s)
		}
	}
	labels := make([]bool, opts.N)
	for i := range opts.N / 2 {
		labels[i] = true
	}
	r.Shuffle(len(labels), func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })

	rows := make([]Row, 0, opts.N)
	seen := make(map[string]bool, opts.N)
	for _, mal := range labels {
		level := levels[r.IntN(len(levels))]
		pool := benign
		if mal {
			pool = malicious
		}
		g := &gen{r: r, level: level}
		for attempt := 0; ; attempt++ {
			s := pick(r, pool, level)
			f := s.gen(g)
			g.record(&f)
			degrade(g, &f)
			h := f.Hash()
			if seen[h] {
				if attempt > 100 {
					return nil, fmt.Errorf("generate: cannot find a fresh flow after %d attempts", attempt)
				}
				continue
			}
			seen[h] = true
			q, _ := Render(f, opts.Render)
			answer := LabelBenign
			if mal {
				answer = LabelMalicious
			}
			rows = append(rows, Row{
				ID:       "synth-" + h,
				Question: q,
				Answer:   answer,
				Meta: map[string]any{
					"source":            "svbench-synth",
					"scenario":          s.name,
					"attack_family":     s.family,
					"hash":              h,
					"difficulty":        levelNames[level],
					"lookalike":         s.lookalike,
					"generator_version": GeneratorVersion,
				},
			})
			break
		}
	}
	return rows, nil
}

var levelNames = [3]string{DifficultyEasy, DifficultyMedium, DifficultyHard}

func levelsFor(d string) ([]int, error) {
	switch d {
	case DifficultyEasy:
		return []int{0}, nil
	case DifficultyMedium:
		return []int{1}, nil
	case DifficultyHard:
		return []int{2}, nil
	case "", DifficultyMixed:
		return []int{0, 1, 2}, nil
	}
	return nil, fmt.Errorf("generate: unknown difficulty %q (want easy, medium, hard or mixed)", d)
}

func pick(r *rand.Rand, pool []scenario, level int) scenario {
	total := 0.0
	for _, s := range pool {
		total += s.weight(level)
	}
	x := r.Float64() * total
	for _, s := range pool {
		x -= s.weight(level)
		if x < 0 {
			return s
		}
	}
	return pool[len(pool)-1]
}

// degrade removes what real sensors lose: Zeek leaves bytes and duration
// unset for connections without payload or still open at rotation, asset
// inventories are incomplete, and window counters come from collectors that
// keep different aggregates. Harder levels lose more.
func degrade(g *gen, f *Flow) {
	drop := [3]float64{0, 0.15, 0.35}[g.level]
	if drop == 0 {
		return
	}
	r := g.r
	if r.Float64() < drop {
		f.Duration = nil
	}
	if r.Float64() < drop {
		f.OrigBytes, f.RespBytes = nil, nil
	}
	if r.Float64() < drop {
		f.OrigPkts, f.RespPkts = nil, nil
	}
	if r.Float64() < drop {
		f.Service = ""
	}
	if r.Float64() < drop*1.5 {
		f.DeviceType = ""
	}
	if r.Float64() < drop/2 {
		f.Timestamp = time.Time{}
	}
	if f.Window == nil {
		return
	}
	if r.Float64() < drop*1.2 {
		f.Window = nil
		return
	}
	w := f.Window
	for _, p := range []**int{&w.Conns, &w.DistinctDstPorts, &w.DistinctDstHosts, &w.FailedAuth} {
		if r.Float64() < drop {
			*p = nil
		}
	}
	for _, p := range []**float64{&w.RejectedRatio, &w.IntervalMean, &w.IntervalCV} {
		if r.Float64() < drop {
			*p = nil
		}
	}
	if r.Float64() < drop {
		w.BytesOut = nil
	}
}

// --- random helpers -----------------------------------------------------

func (g *gen) uniform(lo, hi float64) float64 { return lo + g.r.Float64()*(hi-lo) }

// logUniform spreads values over orders of magnitude, as byte counts are.
func (g *gen) logUniform(lo, hi float64) float64 {
	return math.Exp(g.uniform(math.Log(lo), math.Log(hi)))
}

func (g *gen) intIn(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *gen) bytesIn(lo, hi float64) *int64 { return I64(int64(g.logUniform(lo, hi))) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// byLevel picks the easy, medium or hard variant of a parameter.
func byLevel[T any](g *gen, easy, medium, hard T) T {
	return [3]T{easy, medium, hard}[g.level]
}

func oneOf[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

func (g *gen) round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

var epoch = time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)

// at returns a timestamp on one of 28 days within the given UTC hours.
func (g *gen) at(fromHour, toHour int) time.Time {
	day := g.r.IntN(28)
	sec := g.intIn(fromHour*3600, toHour*3600-1)
	return epoch.Add(time.Duration(day)*24*time.Hour + time.Duration(sec)*time.Second + time.Duration(g.r.IntN(1_000_000))*time.Microsecond)
}

func (g *gen) anyTime() time.Time { return g.at(0, 24) }

func (g *gen) businessHours() time.Time { return g.at(7, 19) }

func (g *gen) internalIP() string {
	switch g.r.IntN(3) {
	case 0:
		return "10." + strconv.Itoa(g.intIn(0, 20)) + "." + strconv.Itoa(g.intIn(0, 254)) + "." + strconv.Itoa(g.intIn(2, 254))
	case 1:
		return "192.168." + strconv.Itoa(g.intIn(0, 10)) + "." + strconv.Itoa(g.intIn(2, 254))
	}
	return "172." + strconv.Itoa(g.intIn(16, 31)) + "." + strconv.Itoa(g.intIn(0, 254)) + "." + strconv.Itoa(g.intIn(2, 254))
}

// externalIP draws from public-looking ranges (never private, loopback or
// multicast space).
func (g *gen) externalIP() string {
	first := oneOf(g, 13, 20, 23, 31, 34, 45, 52, 62, 77, 81, 89, 91, 104, 142, 151, 172, 185, 193, 203, 212)
	second := g.intIn(0, 254)
	if first == 172 {
		second = g.intIn(64, 254) // stay clear of 172.16.0.0/12
	}
	return strconv.Itoa(first) + "." + strconv.Itoa(second) + "." + strconv.Itoa(g.intIn(0, 254)) + "." + strconv.Itoa(g.intIn(1, 254))
}

func (g *gen) ephemeral() int { return g.intIn(32768, 60999) }

func (g *gen) resolver() string {
	return oneOf(g, "10.0.0.53", "192.168.1.1", "8.8.8.8", "1.1.1.1", "9.9.9.9", "10.1.0.2")
}

// pkts estimates a packet count from a byte count and a typical segment size.
func (g *gen) pkts(bytes *int64, seg float64) *int64 {
	if bytes == nil {
		return nil
	}
	n := int64(float64(*bytes)/seg*g.uniform(0.9, 1.3)) + int64(g.intIn(2, 5))
	return &n
}

func (g *gen) tcpFlow(f Flow, orig, resp *int64) Flow {
	f.OrigBytes, f.RespBytes = orig, resp
	f.OrigPkts, f.RespPkts = g.pkts(orig, 700), g.pkts(resp, 1200)
	return f
}

// window builds the source-activity counters; cv is the inter-arrival
// coefficient of variation.
func (g *gen) window(conns, ports, hosts, failed int, rejected, meanGap, cv float64, bytesOut int64) *Window {
	w := &Window{
		Seconds:          300,
		Conns:            Int(max(conns, 1)),
		DistinctDstPorts: Int(max(ports, 1)),
		DistinctDstHosts: Int(max(hosts, 1)),
		FailedAuth:       Int(failed),
		RejectedRatio:    F64(g.round(math.Min(math.Max(rejected, 0), 1), 2)),
		BytesOut:         I64(bytesOut),
	}
	// A collector computes inter-arrival statistics whenever it has two
	// arrivals, whatever the traffic; scenarios without a characteristic
	// rhythm (meanGap 0) arrive irregularly, spread over the window.
	if conns > 1 {
		if meanGap <= 0 {
			meanGap, cv = 300/float64(conns)*g.uniform(0.5, 1.5), g.uniform(0.6, 2.4)
		}
		w.IntervalMean = F64(g.round(meanGap, 1))
		w.IntervalCV = F64(g.round(math.Max(cv, 0), 2))
	}
	return w
}

// --- benign traffic -----------------------------------------------------

func genWeb(g *gen) Flow {
	port := oneOf(g, 443, 443, 443, 80)
	svc := map[int]string{443: "ssl", 80: "http"}[port]
	orig, resp := g.bytesIn(400, 8_000), g.bytesIn(1_500, 3_000_000)
	f := g.tcpFlow(Flow{
		Timestamp: g.businessHours(), DeviceType: oneOf(g, "workstation", "laptop", "smartphone"), Direction: "outbound",
		Proto: "tcp", Service: svc, SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.externalIP(), DstPort: port,
		Duration: F64(g.round(g.logUniform(0.05, 120), 6)), ConnState: oneOf(g, "SF", "SF", "SF", "RSTO", "S1"), History: oneOf(g, "ShADadFf", "ShADadfF", "ShADadR", "ShADad"),
	}, orig, resp)
	conns := g.intIn(15, 220)
	f.Window = g.window(conns, g.intIn(1, 3), g.intIn(4, 60), 0, g.uniform(0, 0.06), 300/float64(conns), g.uniform(0.9, 2.6), *orig*int64(g.intIn(1, 6)))
	return f
}

func genDNS(g *gen) Flow {
	orig, resp := I64(int64(g.intIn(28, 90))), I64(int64(g.intIn(44, 420)))
	f := Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "workstation", "laptop", "server", "printer", "camera"), Direction: "outbound",
		Proto: "udp", Service: "dns", SrcIP: g.internalIP(), SrcPort: g.intIn(1024, 65535), DstIP: g.resolver(), DstPort: 53,
		Duration: F64(g.round(g.logUniform(0.0003, 0.25), 6)), OrigBytes: orig, RespBytes: resp,
		OrigPkts: I64(1), RespPkts: I64(1), ConnState: "SF", History: "Dd",
	}
	if f.DstIP == "10.0.0.53" || f.DstIP == "192.168.1.1" || f.DstIP == "10.1.0.2" {
		f.Direction = "internal"
	}
	conns := g.intIn(5, 260)
	f.Window = g.window(conns, 1, g.intIn(1, 2), 0, g.uniform(0, 0.03), 300/float64(conns), g.uniform(0.8, 3), int64(conns)*int64(g.intIn(30, 80)))
	return f
}

func genNTP(g *gen) Flow {
	gap := oneOf(g, 64.0, 128, 256, 512, 1024)
	f := Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "server", "camera", "router", "workstation", "thermostat"), Direction: "outbound",
		Proto: "udp", Service: "ntp", SrcIP: g.internalIP(), SrcPort: oneOf(g, 123, g.ephemeral()), DstIP: g.externalIP(), DstPort: 123,
		Duration: F64(g.round(g.uniform(0.005, 0.09), 6)), OrigBytes: I64(48), RespBytes: I64(48), OrigPkts: I64(1), RespPkts: I64(1),
		ConnState: "SF", History: "Dd",
	}
	conns := max(int(300/gap), 1) + g.intIn(0, 1)
	f.Window = g.window(conns, 1, g.intIn(1, 4), 0, 0, gap, g.uniform(0.0, 0.05), int64(48*conns))
	return f
}

func genUpdate(g *gen) Flow {
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "workstation", "laptop", "server"), Direction: "outbound",
		Proto: "tcp", Service: oneOf(g, "ssl", "http"), SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.externalIP(), DstPort: 443,
		Duration: F64(g.round(g.logUniform(8, 1800), 6)), ConnState: "SF", History: "ShADadFf",
	}, g.bytesIn(2_000, 90_000), g.bytesIn(5e6, 2.5e9))
	if f.Service == "http" {
		f.DstPort = 80
	}
	f.Window = g.window(g.intIn(2, 30), g.intIn(1, 2), g.intIn(1, 6), 0, 0, 0, 0, *f.OrigBytes)
	return f
}

func genStreaming(g *gen) Flow {
	f := g.tcpFlow(Flow{
		Timestamp: g.at(16, 24), DeviceType: oneOf(g, "smart-tv", "laptop", "smartphone", "streaming-stick"), Direction: "outbound",
		Proto: oneOf(g, "tcp", "tcp", "udp"), Service: "ssl", SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.externalIP(), DstPort: 443,
		Duration: F64(g.round(g.logUniform(60, 7200), 6)), ConnState: "SF", History: "ShADadFf",
	}, g.bytesIn(50_000, 4e6), g.bytesIn(5e7, 4e9))
	if f.Proto == "udp" { // QUIC
		f.Service, f.History = "quic", "Dd"
	}
	f.Window = g.window(g.intIn(3, 40), g.intIn(1, 2), g.intIn(1, 8), 0, 0, 0, 0, *f.OrigBytes)
	return f
}

func genSSHAdmin(g *gen) Flow {
	f := g.tcpFlow(Flow{
		Timestamp: g.businessHours(), DeviceType: oneOf(g, "admin-workstation", "laptop", "jump-host"), Direction: "internal",
		Proto: "tcp", Service: "ssh", SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: 22,
		Duration: F64(g.round(g.logUniform(20, 14_400), 6)), ConnState: "SF", History: "ShAdDaFf",
	}, g.bytesIn(3_000, 2e6), g.bytesIn(4_000, 2e7))
	f.Window = g.window(g.intIn(1, 8), g.intIn(1, 3), g.intIn(1, 4), byLevel(g, 0, g.intIn(0, 1), g.intIn(0, 3)), 0, 0, 0, *f.OrigBytes)
	return f
}

func genTelemetry(g *gen) Flow {
	port := oneOf(g, 8883, 443, 1883, 5683)
	proto, svc := "tcp", "ssl"
	switch port {
	case 1883:
		svc = "mqtt"
	case 5683:
		proto, svc = "udp", "coap"
	}
	gap := oneOf(g, 10.0, 15, 30, 60)
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "thermostat", "camera", "smart-plug", "sensor-hub"), Direction: "outbound",
		Proto: proto, Service: svc, SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.externalIP(), DstPort: port,
		Duration: F64(g.round(g.uniform(0.05, 2), 6)), ConnState: "SF", History: "ShADadFf",
	}, g.bytesIn(120, 2_500), g.bytesIn(60, 900))
	if proto == "udp" {
		f.History = "Dd"
	}
	conns := int(300 / gap)
	f.Window = g.window(conns, 1, 1, 0, 0, gap, g.uniform(0.01, 0.12), *f.OrigBytes*int64(conns))
	return f
}

func genMail(g *gen) Flow {
	port := oneOf(g, 25, 587, 993, 465)
	svc := map[int]string{25: "smtp", 587: "smtp", 993: "ssl", 465: "ssl"}[port]
	dev := "workstation"
	if port == 25 {
		dev = "mail-server"
	}
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: dev, Direction: "outbound",
		Proto: "tcp", Service: svc, SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.externalIP(), DstPort: port,
		Duration: F64(g.round(g.logUniform(0.3, 40), 6)), ConnState: "SF", History: "ShAdDaFf",
	}, g.bytesIn(800, 12e6), g.bytesIn(400, 30_000))
	f.Window = g.window(g.intIn(1, 60), g.intIn(1, 2), g.intIn(1, 25), 0, g.uniform(0, 0.05), 0, 0, *f.OrigBytes)
	return f
}

// genBackup is large nightly uploads: the benign twin of exfiltration.
func genBackup(g *gen) Flow {
	port := oneOf(g, 443, 22, 873, 445)
	svc := map[int]string{443: "ssl", 22: "ssh", 873: "", 445: "smb"}[port]
	dst, dir := g.externalIP(), "outbound"
	if port == 445 || g.chance(0.3) {
		dst, dir = g.internalIP(), "internal"
	}
	f := g.tcpFlow(Flow{
		Timestamp: g.at(0, 5), DeviceType: oneOf(g, "nas", "server", "database-server", "backup-appliance"), Direction: dir,
		Proto: "tcp", Service: svc, SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: dst, DstPort: port,
		Duration: F64(g.round(g.logUniform(300, 14_000), 6)), ConnState: "SF", History: "ShADadFf",
	}, g.bytesIn(byLevel(g, 5e8, 1e8, 2e7), 6e10), g.bytesIn(20_000, 5e6))
	f.Window = g.window(g.intIn(1, 4), 1, 1, 0, 0, 0, 0, *f.OrigBytes)
	return f
}

// genHealthCheck is a monitoring poller: machine-regular like a beacon.
func genHealthCheck(g *gen) Flow {
	port := oneOf(g, 80, 443, 9100, 8080, 161)
	proto, svc := "tcp", map[int]string{80: "http", 443: "ssl", 9100: "http", 8080: "http", 161: "snmp"}[port]
	if port == 161 {
		proto = "udp"
	}
	gap := oneOf(g, 10.0, 15, 30, 60)
	hosts := byLevel(g, g.intIn(20, 200), g.intIn(5, 80), g.intIn(1, 8))
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "monitoring-server", "server", "load-balancer"), Direction: "internal",
		Proto: proto, Service: svc, SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: port,
		Duration: F64(g.round(g.uniform(0.002, 0.3), 6)), ConnState: "SF", History: "ShADadFf",
	}, g.bytesIn(70, 600), g.bytesIn(150, 9_000))
	if proto == "udp" {
		f.History = "Dd"
	}
	if g.level == 2 && g.chance(0.5) { // an external uptime monitor looks even more like C2
		f.DstIP, f.Direction, f.DstPort, f.Service = g.externalIP(), "outbound", 443, "ssl"
	}
	conns := int(300/gap) * hosts
	f.Window = g.window(conns, g.intIn(1, 3), hosts, 0, g.uniform(0, 0.08), gap, g.uniform(0.0, 0.08), *f.OrigBytes*int64(300/gap))
	return f
}

// genITScan is the security team's own scanner: a port scan by any measure.
func genITScan(g *gen) Flow {
	f := Flow{
		Timestamp: g.at(byLevel(g, 1, 0, 0), byLevel(g, 4, 24, 24)), DeviceType: byLevel(g, "vuln-scanner", oneOf(g, "vuln-scanner", "server"), "server"), Direction: "internal",
		Proto: "tcp", SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: oneOf(g, 22, 23, 445, 3389, 5900, 8443, g.intIn(1, 65535)),
		ConnState: oneOf(g, "REJ", "S0", "SF", "RSTO"), History: oneOf(g, "Sr", "S", "ShADadR", "ShR"),
	}
	if f.ConnState == "SF" || f.ConnState == "RSTO" {
		f = g.tcpFlow(f, g.bytesIn(40, 2_000), g.bytesIn(40, 4_000))
		f.Duration = F64(g.round(g.uniform(0.01, 3), 6))
	} else {
		f.OrigBytes, f.RespBytes, f.OrigPkts, f.RespPkts = I64(0), I64(0), I64(int64(g.intIn(1, 2))), I64(int64(g.intIn(0, 1)))
	}
	ports := g.intIn(100, 2_000)
	f.Window = g.window(ports+g.intIn(0, 200), ports, g.intIn(1, 64), g.intIn(0, 3), g.uniform(0.55, 0.95), 0.2, g.uniform(0.1, 0.6), int64(ports*60))
	return f
}

// --- attacks --------------------------------------------------------------

func genPortScan(g *gen) Flow {
	src, dir := g.externalIP(), "inbound"
	if g.chance(0.4) {
		src, dir = g.internalIP(), "internal"
	}
	f := Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "workstation", "server", "printer"), Direction: dir,
		Proto: "tcp", SrcIP: src, SrcPort: oneOf(g, g.ephemeral(), g.intIn(40000, 65535)), DstIP: g.internalIP(), DstPort: g.intIn(1, 10000),
		ConnState: oneOf(g, "S0", "REJ", "REJ", "RSTOS0"), History: oneOf(g, "S", "Sr", "Sr"),
		OrigBytes: I64(0), RespBytes: I64(0), OrigPkts: I64(int64(g.intIn(1, 2))), RespPkts: I64(int64(g.intIn(0, 1))),
	}
	ports := byLevel(g, g.intIn(300, 5000), g.intIn(60, 1500), g.intIn(30, 600))
	f.Window = g.window(ports, ports, g.intIn(1, 30), 0, g.uniform(0.8, 1), 300/float64(ports), g.uniform(0.05, 0.5), 0)
	return f
}

// genSlowScan spreads probes thinly so a 5-minute window sees only a few.
func genSlowScan(g *gen) Flow {
	f := Flow{
		Timestamp: g.anyTime(), Direction: "inbound", DeviceType: oneOf(g, "server", "workstation"),
		Proto: "tcp", SrcIP: g.externalIP(), SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: oneOf(g, 21, 22, 23, 25, 80, 110, 139, 443, 445, 1433, 3306, 3389, 5432, 5900, 6379, 8080, 9200),
		ConnState: oneOf(g, "S0", "REJ", "SH", "OTH"), History: oneOf(g, "S", "Sr", "F", "H"),
		OrigPkts: I64(1), RespPkts: I64(int64(g.intIn(0, 1))),
	}
	if g.chance(0.5) {
		f.OrigBytes, f.RespBytes = I64(0), I64(0)
	}
	ports := byLevel(g, g.intIn(8, 20), g.intIn(3, 10), g.intIn(1, 5))
	f.Window = g.window(ports+g.intIn(0, 2), ports, g.intIn(1, 3), 0, g.uniform(0.3, 1), 300/float64(ports+1), g.uniform(0.3, 1.2), 0)
	return f
}

func genSSHBrute(g *gen) Flow {
	src, dir := g.externalIP(), "inbound"
	if g.chance(0.25) {
		src, dir = g.internalIP(), "internal"
	}
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "server", "jump-host", "router"), Direction: dir,
		Proto: "tcp", Service: "ssh", SrcIP: src, SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: oneOf(g, 22, 22, 22, 2222),
		Duration: F64(g.round(g.uniform(0.8, 6), 6)), ConnState: oneOf(g, "SF", "RSTO", "RSTR", "S1"), History: oneOf(g, "ShAdDaFf", "ShAdDaR", "ShAdDar"),
	}, g.bytesIn(900, 3_200), g.bytesIn(800, byLevel(g, 4_500.0, 12_000, 60_000)))
	fails := byLevel(g, g.intIn(40, 900), g.intIn(8, 120), g.intIn(2, 12))
	conns := fails/byLevel(g, 3, 3, 2) + 1
	f.Window = g.window(conns, 1, byLevel(g, 1, g.intIn(1, 3), g.intIn(1, 2)), fails, g.uniform(0, 0.2), 300/float64(conns), g.uniform(0.1, 0.9), *f.OrigBytes*int64(conns))
	return f
}

func genTelnetBrute(g *gen) Flow {
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "camera", "dvr", "router"), Direction: "inbound",
		Proto: "tcp", Service: oneOf(g, "telnet", ""), SrcIP: g.externalIP(), SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: oneOf(g, 23, 2323),
		Duration: F64(g.round(g.uniform(0.5, 9), 6)), ConnState: oneOf(g, "SF", "RSTO", "S1", "RSTR"), History: oneOf(g, "ShAdDaFf", "ShAdDaR", "ShADadR"),
	}, g.bytesIn(30, 400), g.bytesIn(20, 600))
	fails := byLevel(g, g.intIn(30, 500), g.intIn(6, 80), g.intIn(1, 10))
	conns := fails/2 + 1
	f.Window = g.window(conns, 1, g.intIn(1, 2), fails, g.uniform(0, 0.3), 300/float64(conns), g.uniform(0.1, 0.8), *f.OrigBytes*int64(conns))
	return f
}

// genBeacon is implant check-in traffic: small, regular, to one rare host.
func genBeacon(g *gen) Flow {
	port := byLevel(g, oneOf(g, 4444, 8080, 8443, 9001, 1337, 443), oneOf(g, 443, 8080, 80, 8443), oneOf(g, 443, 443, 80))
	svc := map[int]string{443: "ssl", 80: "http", 8080: "http", 8443: "ssl"}[port]
	gap := byLevel(g, oneOf(g, 5.0, 10, 30, 60), oneOf(g, 30.0, 60, 120), oneOf(g, 60.0, 120, 240))
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "workstation", "laptop", "server"), Direction: "outbound",
		Proto: "tcp", Service: svc, SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.externalIP(), DstPort: port,
		Duration: F64(g.round(g.uniform(0.05, 1.5), 6)), ConnState: oneOf(g, "SF", "SF", "RSTO"), History: oneOf(g, "ShADadFf", "ShADadR"),
	}, g.bytesIn(150, 1_800), g.bytesIn(100, byLevel(g, 2_000.0, 6_000, 30_000)))
	conns := max(int(300/gap), 1)
	cv := byLevel(g, g.uniform(0.0, 0.1), g.uniform(0.05, 0.3), g.uniform(0.15, 0.6))
	f.Window = g.window(conns, 1, 1, 0, 0, gap, cv, *f.OrigBytes*int64(conns))
	return f
}

func genFlood(g *gen) Flow {
	f := Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "web-server", "server", "load-balancer"), Direction: "inbound",
		Proto: "tcp", SrcIP: g.externalIP(), SrcPort: g.intIn(1024, 65535), DstIP: g.internalIP(), DstPort: oneOf(g, 80, 443, 53),
		ConnState: oneOf(g, "S0", "S0", "SH", "REJ"), History: oneOf(g, "S", "S", "Sr", "ShR"),
		OrigBytes: I64(0), RespBytes: I64(0), OrigPkts: I64(int64(g.intIn(1, 3))), RespPkts: I64(0),
		Duration: F64(g.round(g.uniform(0, 3.2), 6)),
	}
	if f.DstPort == 53 && g.chance(0.6) { // DNS query flood
		f.Proto, f.Service, f.ConnState, f.History = "udp", "dns", "S0", "D"
		f.OrigBytes, f.OrigPkts = I64(int64(g.intIn(30, 70))), I64(1)
	}
	conns := byLevel(g, g.intIn(20_000, 400_000), g.intIn(2_000, 60_000), g.intIn(300, 4_000))
	f.Window = g.window(conns, 1, 1, 0, g.uniform(0.85, 1), 300/float64(conns), g.uniform(0.2, 1.5), int64(conns)*int64(g.intIn(40, 80)))
	return f
}

func genExfil(g *gen) Flow {
	port := byLevel(g, oneOf(g, 21, 22, 4444, 8080, 6667, 53), oneOf(g, 443, 22, 8443, 53), oneOf(g, 443, 443, 22))
	svc := map[int]string{21: "ftp", 22: "ssh", 443: "ssl", 8443: "ssl", 53: "dns", 8080: "http", 6667: "irc"}[port]
	f := g.tcpFlow(Flow{
		Timestamp: byLevel(g, g.at(0, 5), g.anyTime(), g.anyTime()), DeviceType: oneOf(g, "workstation", "laptop", "database-server", "file-server"), Direction: "outbound",
		Proto: "tcp", Service: svc, SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.externalIP(), DstPort: port,
		Duration: F64(g.round(g.logUniform(60, 9_000), 6)), ConnState: oneOf(g, "SF", "SF", "S1", "RSTO"), History: oneOf(g, "ShADadFf", "ShADad", "ShADadR"),
	}, g.bytesIn(byLevel(g, 5e8, 5e7, 1e7), byLevel(g, 2e10, 5e9, 2e9)), g.bytesIn(2_000, 400_000))
	if port == 53 { // DNS tunnelling: many queries with oversized payloads
		f.Proto, f.History, f.Duration = "udp", "Dd", F64(g.round(g.uniform(0.01, 0.4), 6))
		f.OrigBytes, f.RespBytes = I64(int64(g.intIn(180, 255))), I64(int64(g.intIn(60, 300)))
		f.OrigPkts, f.RespPkts = I64(1), I64(1)
		conns := g.intIn(400, 5_000)
		f.Window = g.window(conns, 1, 1, 0, 0, 300/float64(conns), g.uniform(0.1, 0.6), int64(conns)*220)
		return f
	}
	f.Window = g.window(g.intIn(1, 5), 1, 1, 0, 0, 0, 0, *f.OrigBytes)
	return f
}

// genSlowExfil leaks data in modest chunks over ordinary-looking HTTPS.
func genSlowExfil(g *gen) Flow {
	f := g.tcpFlow(Flow{
		Timestamp: g.businessHours(), DeviceType: oneOf(g, "workstation", "laptop"), Direction: "outbound",
		Proto: "tcp", Service: "ssl", SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.externalIP(), DstPort: 443,
		Duration: F64(g.round(g.logUniform(5, 600), 6)), ConnState: "SF", History: "ShADadFf",
	}, g.bytesIn(byLevel(g, 2e7, 5e6, 1e6), byLevel(g, 2e8, 1e8, 4e7)), g.bytesIn(3_000, 60_000))
	conns := g.intIn(2, 20)
	f.Window = g.window(conns, 1, 1, 0, 0, 300/float64(conns), g.uniform(0.2, 1.2), *f.OrigBytes*int64(conns))
	return f
}

// genMirai is an infected IoT device sweeping the internet for telnet.
func genMirai(g *gen) Flow {
	f := Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "camera", "dvr", "router", "smart-plug"), Direction: "outbound",
		Proto: "tcp", SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.externalIP(), DstPort: oneOf(g, 23, 23, 23, 2323, 23231, 37215, 52869),
		ConnState: oneOf(g, "S0", "S0", "REJ", "RSTR"), History: oneOf(g, "S", "S", "Sr"),
		OrigBytes: I64(0), RespBytes: I64(0), OrigPkts: I64(int64(g.intIn(1, 2))), RespPkts: I64(int64(g.intIn(0, 1))),
	}
	if g.chance(0.3) {
		f.Duration = F64(g.round(g.uniform(2.9, 3.2), 6)) // SYN retransmission timer
	}
	hosts := byLevel(g, g.intIn(500, 20_000), g.intIn(60, 2_000), g.intIn(10, 200))
	f.Window = g.window(hosts+g.intIn(0, 50), g.intIn(1, 3), hosts, 0, g.uniform(0.85, 1), 300/float64(hosts), g.uniform(0.2, 1), int64(hosts)*60)
	return f
}

// --- synth-2: shared connection-state and direction draws ------------------

// history is the Zeek history string a connection state produces. It is
// derived from the state (and protocol) alone, the same way for every
// scenario, so it carries no label information the state does not.
func (g *gen) history(proto, state string) string {
	if proto == "udp" {
		if state == "S0" {
			return "D"
		}
		return "Dd"
	}
	switch state {
	case "SF":
		return oneOf(g, "ShADadFf", "ShADadfF", "ShAdDaFf", "ShADFf")
	case "S0":
		return "S"
	case "REJ":
		return "Sr"
	case "RSTO":
		return oneOf(g, "ShADadR", "ShAR")
	case "RSTR":
		return oneOf(g, "ShADadr", "ShAdDar")
	case "RSTOS0":
		return "SR"
	case "S1":
		return "ShADad"
	case "SH":
		return "SF"
	case "OTH":
		return "H"
	}
	return "-"
}

// record applies the sensor's recording rules to a flow the same way
// whatever scenario made it, so that which fields are present says nothing
// about the label (issue #33: interval statistics recorded mostly for
// attacks, durations missing only for scans, unknown assets only under
// attack all predicted the label out of sample). Zeek leaves duration unset
// for a connection of one packet and has no better timing for one that
// never completed a handshake than its retransmissions, so both are drawn
// from the packets and the state alone; counters the scenario left open are
// zero; the history follows from the state. What a sensor loses beyond
// this is degrade's, again the same for both classes.
func (g *gen) record(f *Flow) {
	for _, p := range []**int64{&f.OrigBytes, &f.RespBytes, &f.RespPkts} {
		if *p == nil {
			*p = I64(0)
		}
	}
	if f.OrigPkts == nil {
		f.OrigPkts = I64(1)
	}
	switch {
	case *f.OrigPkts+*f.RespPkts <= 1:
		f.Duration = nil
	case f.ConnState == "REJ":
		f.Duration = F64(g.round(g.logUniform(0.00005, 0.3), 6))
	case f.Proto == "tcp" && failedStates[f.ConnState]:
		f.Duration = F64(g.round(g.uniform(0.0005, 9.5), 6))
	case f.Duration == nil:
		f.Duration = F64(g.round(g.logUniform(0.001, 30), 6))
	}
	if g.chance(0.06) { // an asset missing from the inventory
		f.DeviceType = ""
	}
	f.History = g.history(f.Proto, f.ConnState)
}

// failedStates are the TCP states of a connection that never got going.
var failedStates = map[string]bool{"S0": true, "REJ": true, "RSTOS0": true, "SH": true, "OTH": true}

// failedState is how a connection that got no service ends: unanswered
// or refused, sometimes reset.
func (g *gen) failedState() string { return oneOf(g, "S0", "S0", "REJ", "REJ", "RSTR", "SH") }

// genPublicWeb is an internet client visiting the organisation's public
// web server: inbound, public source, mostly completed.
func genPublicWeb(g *gen) Flow {
	port := oneOf(g, 443, 443, 80)
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "web-server", "load-balancer", "server"), Direction: "inbound",
		Proto: "tcp", Service: map[int]string{443: "ssl", 80: "http"}[port], SrcIP: g.externalIP(), SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: port,
		Duration: F64(g.round(g.logUniform(0.05, 90), 6)), ConnState: oneOf(g, "SF", "SF", "SF", "SF", "RSTO", "RSTR", "S0", "S1"),
	}, g.bytesIn(300, 9_000), g.bytesIn(200, 2_000_000))
	if f.ConnState == "S0" { // a client that went away mid-handshake
		f.OrigBytes, f.RespBytes, f.OrigPkts, f.RespPkts, f.Service = I64(0), I64(0), I64(int64(g.intIn(1, 3))), I64(0), ""
	}
	conns := g.intIn(1, 40)
	f.Window = g.window(conns, 1, 1, byLevel(g, 0, g.intIn(0, 1), g.intIn(0, 3)), g.uniform(0, 0.25), 300/float64(conns+1), g.uniform(0.5, 2.5), *f.OrigBytes*int64(conns))
	return f
}

// genInboundMail is another organisation's mail server delivering mail.
func genInboundMail(g *gen) Flow {
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: "mail-server", Direction: "inbound",
		Proto: "tcp", Service: "smtp", SrcIP: g.externalIP(), SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: 25,
		Duration: F64(g.round(g.logUniform(0.3, 30), 6)), ConnState: oneOf(g, "SF", "SF", "SF", "RSTO", "REJ"),
	}, g.bytesIn(1_000, 15e6), g.bytesIn(300, 3_000))
	if f.ConnState == "REJ" { // greylisting or a full queue
		f.OrigBytes, f.RespBytes, f.OrigPkts, f.RespPkts, f.Service, f.Duration = I64(0), I64(0), I64(1), I64(1), "", nil
	}
	conns := g.intIn(1, 12)
	f.Window = g.window(conns, 1, 1, 0, g.uniform(0, 0.3), 0, 0, *f.OrigBytes*int64(conns))
	return f
}

// genRemoteAccess is staff reaching the VPN gateway or bastion from home.
func genRemoteAccess(g *gen) Flow {
	port := oneOf(g, 443, 22, 1194, 4500)
	proto := "tcp"
	if port == 1194 || port == 4500 {
		proto = "udp"
	}
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "vpn-gateway", "jump-host", "router"), Direction: "inbound",
		Proto: proto, Service: map[int]string{443: "ssl", 22: "ssh", 1194: "", 4500: ""}[port], SrcIP: g.externalIP(), SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: port,
		Duration: F64(g.round(g.logUniform(5, 20_000), 6)), ConnState: oneOf(g, "SF", "SF", "SF", "RSTO", "S1"),
	}, g.bytesIn(5_000, 5e8), g.bytesIn(20_000, 2e9))
	if proto == "udp" {
		f.ConnState = oneOf(g, "SF", "SF", "SF", "S0")
	}
	f.Window = g.window(g.intIn(1, 6), 1, 1, byLevel(g, g.intIn(0, 1), g.intIn(0, 2), g.intIn(0, 4)), g.uniform(0, 0.2), 0, 0, *f.OrigBytes)
	return f
}

// genFailedConn is an ordinary client failing to reach a service that is
// down, moved or firewalled: refused or unanswered, but one host and one
// port, a handful of retries.
func genFailedConn(g *gen) Flow {
	port := oneOf(g, 443, 80, 8080, 9100, 3389, 445, 5432, 22, 631, 8443)
	dst, dir := g.internalIP(), "internal"
	if g.chance(0.5) {
		dst, dir = g.externalIP(), "outbound"
	}
	f := Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "workstation", "laptop", "server", "printer", "smartphone"), Direction: dir,
		Proto: "tcp", SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: dst, DstPort: port, ConnState: g.failedState(),
		OrigBytes: I64(0), RespBytes: I64(0), OrigPkts: I64(int64(g.intIn(1, 3))), RespPkts: I64(int64(g.intIn(0, 1))),
		Duration: F64(g.round(g.uniform(0, 9), 6)),
	}
	retries := g.intIn(1, 12)
	f.Window = g.window(retries, 1, 1, 0, g.uniform(0.5, 1), byLevel(g, 8.0, 4, 2)*g.uniform(1, 4), g.uniform(0.1, 0.9), int64(retries*60))
	return f
}

// genOneWayUDP is traffic that never gets an answer by design: syslog,
// SNMP traps, NetFlow export, service discovery.
func genOneWayUDP(g *gen) Flow {
	port := oneOf(g, 514, 162, 2055, 1900, 5353, 137)
	dst, dir := g.internalIP(), "internal"
	if port == 514 && g.chance(0.3) {
		dst, dir = g.externalIP(), "outbound" // a cloud log collector
	}
	f := Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "router", "server", "printer", "camera", "workstation", "smart-tv"), Direction: dir,
		Proto: "udp", Service: map[int]string{514: "syslog", 162: "snmp", 2055: "", 1900: "", 5353: "dns", 137: "netbios"}[port],
		SrcIP: g.internalIP(), SrcPort: oneOf(g, port, g.ephemeral()), DstIP: dst, DstPort: port, ConnState: "S0",
		OrigBytes: I64(int64(g.intIn(60, 1_400))), RespBytes: I64(0), OrigPkts: I64(int64(g.intIn(1, 20))), RespPkts: I64(0),
		Duration: F64(g.round(g.uniform(0, 30), 6)),
	}
	conns := g.intIn(2, 300)
	f.Window = g.window(conns, 1, g.intIn(1, 3), 0, g.uniform(0.9, 1), 300/float64(conns), g.uniform(0.05, 1.5), int64(conns)*int64(g.intIn(60, 400)))
	return f
}

// genCredStuffing is password spraying against the public web login:
// completed HTTPS connections, one at a time, each a failed login.
func genCredStuffing(g *gen) Flow {
	src, dir := g.externalIP(), "inbound"
	if g.chance(0.2) {
		src, dir = g.internalIP(), "internal"
	}
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "web-server", "load-balancer", "server"), Direction: dir,
		Proto: "tcp", Service: "ssl", SrcIP: src, SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: 443,
		Duration: F64(g.round(g.uniform(0.1, 3), 6)), ConnState: oneOf(g, "SF", "SF", "SF", "RSTO"),
	}, g.bytesIn(600, 3_000), g.bytesIn(400, byLevel(g, 6_000.0, 40_000, 300_000)))
	fails := byLevel(g, g.intIn(60, 800), g.intIn(12, 150), g.intIn(4, 25))
	conns := fails + g.intIn(0, 5)
	f.Window = g.window(conns, 1, 1, fails, g.uniform(0, 0.1), 300/float64(conns), g.uniform(0.1, 0.8), *f.OrigBytes*int64(conns))
	return f
}

// genLateral is a compromised host spreading over SMB, RDP or SSH inside
// the network: many hosts, some logins failing.
func genLateral(g *gen) Flow {
	port := oneOf(g, 445, 445, 3389, 22, 135)
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, "workstation", "laptop", "server"), Direction: "internal",
		Proto: "tcp", Service: map[int]string{445: "smb", 3389: "rdp", 22: "ssh", 135: "dce_rpc"}[port], SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: port,
		Duration: F64(g.round(g.logUniform(0.2, 60), 6)), ConnState: oneOf(g, "SF", "SF", "REJ", "S0", "RSTO"),
	}, g.bytesIn(400, 200_000), g.bytesIn(300, 100_000))
	if f.ConnState == "REJ" || f.ConnState == "S0" {
		f.OrigBytes, f.RespBytes, f.OrigPkts, f.RespPkts, f.Service = I64(0), I64(0), I64(int64(g.intIn(1, 3))), I64(0), ""
	}
	hosts := byLevel(g, g.intIn(40, 400), g.intIn(10, 80), g.intIn(4, 20))
	f.Window = g.window(hosts+g.intIn(0, 20), g.intIn(1, 2), hosts, byLevel(g, g.intIn(10, 100), g.intIn(2, 30), g.intIn(0, 6)), g.uniform(0.2, 0.7), 300/float64(hosts), g.uniform(0.2, 1), int64(hosts)*int64(g.intIn(500, 5_000)))
	return f
}
