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
// synth-4 (issue #41) labels a flow by its activity and two context facts
// read together (site.go): every activity occurs as benign and as malicious
// traffic drawn from the same distributions, so no field and no pair of
// fields decides a row, and a row whose record does not show what decides it
// is marked meta.ambiguous. synth-3 (issue #33) recorded every field by the
// same sensor rules for both classes; synth-2 (issue #23) drew direction,
// address class and connection state from overlapping distributions; in
// synth-1 every inbound flow and every public source was malicious.
const GeneratorVersion = "synth-4"

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

// An activity is a traffic shape that is normal in one context and not in
// another. Its four cells — the values of its two facts — are two benign and
// two malicious scenarios in a parity: changing either fact alone flips the
// label, so neither fact, nor either fact beside anything the activity's
// shape shows, says more than the other does. The shape is drawn the same
// way in all four cells.
type activity struct {
	name  string
	facts [2]fact
	// cells[v0][v1] is the scenario the facts' values v0, v1 make.
	cells [2][2]scene
	// peerIsSource says which end factPeer places: the source (logins
	// arriving at an internal asset) or the destination.
	peerIsSource bool
	// shape draws the traffic; the facts are applied after it.
	shape func(g *gen) Flow
	// shows reports whether a record shows the counters that identify the
	// activity; without them a reader cannot tell which rule applies.
	shows func(rec record) bool
}

// scene is one scenario of an activity: a cell of its parity.
type scene struct {
	scenario  string
	malicious bool
	family    string // attack family; "none" for benign traffic
}

var activities = []activity{
	{
		// Servers upload in the batch window (backups), people in working
		// hours (cloud sync); the other two are exfiltration.
		name: "bulk_upload", facts: [2]fact{factRole, factTime},
		cells: [2][2]scene{
			roleServer:   {timeWorking: {"server_exfiltration", true, "exfiltration"}, timeBatch: {"nightly_backup", false, "none"}},
			roleEndpoint: {timeWorking: {"cloud_sync", false, "none"}, timeBatch: {"after_hours_exfiltration", true, "exfiltration"}},
		},
		shape: shapeBulk,
		shows: func(rec record) bool {
			b, ok := rec.num("orig_bytes")
			o, okOut := rec.num("bytes_out_to_dst")
			return ok && b >= bulkBytes || okOut && o >= bulkBytes
		},
	},
	{
		// Servers' agents report to vendor services on the internet;
		// people's management agents check in with servers inside. A
		// person's machine on a timer to the internet is a C2 beacon, a
		// server on a timer to an internal host a relay.
		name: "timer_checkin", facts: [2]fact{factRole, factPeer},
		cells: [2][2]scene{
			roleServer:   {peerInternal: {"internal_relay_beacon", true, "command_and_control"}, peerInternet: {"vendor_telemetry", false, "none"}},
			roleEndpoint: {peerInternal: {"management_agent", false, "none"}, peerInternet: {"c2_beacon", true, "command_and_control"}},
		},
		shape: shapeCheckin,
		shows: func(rec record) bool {
			_, f := rec.num("failed_auth")
			_, p := rec.num("distinct_dst_ports")
			return f && p && readFact(rec, factCadence) == cadenceRegular
		},
	},
	{
		// Scheduled jobs with stale passwords fail on a timer in the batch
		// window; staff mistype irregularly in working hours. Regular
		// failures by day are a script guessing, irregular ones at night a
		// person guessing.
		name: "failed_logins", facts: [2]fact{factTime, factCadence},
		cells: [2][2]scene{
			timeWorking: {cadenceIrregular: {"staff_typos", false, "none"}, cadenceRegular: {"scripted_bruteforce", true, "brute_force"}},
			timeBatch:   {cadenceIrregular: {"night_password_guessing", true, "brute_force"}, cadenceRegular: {"stale_credential_job", false, "none"}},
		},
		shape: shapeLogins,
		shows: func(rec record) bool {
			n, ok := rec.num("failed_auth")
			return ok && n >= minFailedLogins
		},
	},
	{
		// Staff browse many internet sites in working hours; the inventory
		// job sweeps internal web servers in the batch window. Internet
		// fan-out at night is a bot, internal fan-out by day reconnaissance.
		name: "web_fanout", facts: [2]fact{factTime, factPeer},
		cells: [2][2]scene{
			timeWorking: {peerInternal: {"internal_web_recon", true, "reconnaissance"}, peerInternet: {"web_browsing", false, "none"}},
			timeBatch:   {peerInternal: {"inventory_sweep", false, "none"}, peerInternet: {"after_hours_bot", true, "botnet"}},
		},
		shape: shapeFanout,
		shows: func(rec record) bool {
			n, ok := rec.num("distinct_dst_hosts")
			return ok && n >= minFanoutHosts
		},
	},
	{
		// The vulnerability scanner (a server) sweeps at a machine-regular
		// pace; engineers sweep by hand from their machines. A server
		// sweeping irregularly, or a person's machine on a timer, is a scan.
		name: "port_sweep", facts: [2]fact{factRole, factCadence},
		cells: [2][2]scene{
			roleServer:   {cadenceIrregular: {"server_port_scan", true, "reconnaissance"}, cadenceRegular: {"scheduled_vuln_scan", false, "none"}},
			roleEndpoint: {cadenceIrregular: {"engineer_port_check", false, "none"}, cadenceRegular: {"malware_port_scan", true, "reconnaissance"}},
		},
		shape: shapeSweep,
		shows: func(rec record) bool {
			n, ok := rec.num("distinct_dst_ports")
			return ok && n >= minSweepPorts
		},
	},
}

// The counters that identify an activity, and the most any other activity
// shows (noise stays below them).
const (
	minFailedLogins = 2
	minFanoutHosts  = 6
	minSweepPorts   = 10
)

// Per-level rates: how often a time or cadence fact is drawn between its
// two values (the record then shows neither), and how often an attack
// takes on the context of its activity's normal traffic (an exfiltration
// timed into the backup window): the gold label knows it, the record does not.
var (
	shoulderRate = [3]float64{0.02, 0.06, 0.12}
	disguiseRate = [3]float64{0, 0.06, 0.15}
)

// gen carries the random source and the row's difficulty.
type gen struct {
	r     *rand.Rand
	level int // 0 easy, 1 medium, 2 hard
}

// Generate produces N labelled flows, half malicious (the odd one benign),
// deterministically for a seed: the same options give byte-identical rows
// on every machine. Each row's meta says its activity and scenario, and
// meta.ambiguous is true when the question does not show what decides it:
// the activity's counters or one of its two facts is missing or between
// its values (every row of the reference rendering, which shows no hour,
// peer or cadence). The default rubric pays an abstention only there.
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
	labels := make([]bool, opts.N)
	for i := range opts.N / 2 {
		labels[i] = true
	}
	r.Shuffle(len(labels), func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })

	rows := make([]Row, 0, opts.N)
	seen := make(map[string]bool, opts.N)
	for _, mal := range labels {
		level := levels[r.IntN(len(levels))]
		g := &gen{r: r, level: level}
		for attempt := 0; ; attempt++ {
			d, err := g.draw(mal)
			if err != nil {
				return nil, err
			}
			h := d.flow.Hash()
			if seen[h] {
				if attempt > 100 {
					return nil, fmt.Errorf("generate: cannot find a fresh flow after %d attempts", attempt)
				}
				continue
			}
			seen[h] = true
			q, _ := Render(d.flow, opts.Render)
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
					"activity":          d.activity.name,
					"scenario":          d.cell.scenario,
					"attack_family":     d.cell.family,
					"hash":              h,
					"difficulty":        levelNames[level],
					"lookalike":         d.disguised,
					"ambiguous":         d.ambiguous || opts.Render == "reference",
					"generator_version": GeneratorVersion,
				},
			})
			break
		}
	}
	return rows, nil
}

// drawn is one generated flow and what the generator knows about it.
type drawn struct {
	flow     Flow
	activity activity
	cell     scene
	// disguised: an attack drawn in the context of its activity's normal
	// traffic, so its record reads benign.
	disguised bool
	// ambiguous: the rich record does not show what decides the row.
	ambiguous bool
}

// draw makes one flow of the given class: an activity, a cell of that
// class (a disguised attack takes a benign cell's context), the shape,
// the facts, the sensor pass and the sensor losses; then it reads the
// record back as a reader would to mark whether it decides the row. A fact
// that reads back other than it was drawn is a generator bug, refused.
func (g *gen) draw(mal bool) (drawn, error) {
	a := activities[g.r.IntN(len(activities))]
	var mine [][2]int // the cells of this class
	for v0 := range 2 {
		for v1 := range 2 {
			if a.cells[v0][v1].malicious == mal {
				mine = append(mine, [2]int{v0, v1})
			}
		}
	}
	vals := mine[g.r.IntN(len(mine))]
	d := drawn{activity: a, cell: a.cells[vals[0]][vals[1]]}
	if mal && g.chance(disguiseRate[g.level]) {
		// Flip one fact: the attack shows a benign cell's context.
		i := g.r.IntN(2)
		vals[i] = 1 - vals[i]
		d.disguised = true
		d.cell.scenario = "disguised_" + d.cell.scenario
	}
	f := a.shape(g)
	for i, fc := range a.facts {
		shoulder := (fc == factTime || fc == factCadence) && g.chance(shoulderRate[g.level])
		g.apply(a, &f, fc, vals[i], shoulder)
	}
	g.record(&f)
	degrade(g, &f)
	d.flow = f

	rec := parseRecord(RenderRich(f))
	decided := a.shows(rec)
	for i, fc := range a.facts {
		v := readFact(rec, fc)
		if v == undecided {
			decided = false
		} else if v != vals[i] {
			return drawn{}, fmt.Errorf("generate: %s: %s drawn as %d reads back as %d", a.name, factNames[fc], vals[i], v)
		}
	}
	d.ambiguous = !decided
	return d, nil
}

// apply sets what a fact's value shows in the record; shoulder draws a
// value between the two (an hour outside both windows, a cadence neither
// regular nor irregular).
func (g *gen) apply(a activity, f *Flow, fc fact, v int, shoulder bool) {
	switch fc {
	case factRole:
		f.DeviceType = oneOf(g, [2][]string{roleServer: serverDevices, roleEndpoint: endpointDevices}[v]...)
	case factTime:
		switch {
		case shoulder && g.chance(0.3):
			f.Timestamp = g.at(batchLastHour+1, workingFirstHour)
		case shoulder:
			f.Timestamp = g.at(workingLastHour+1, 24)
		case v == timeBatch:
			f.Timestamp = g.at(batchFirstHour, batchLastHour+1)
		default:
			f.Timestamp = g.at(workingFirstHour, workingLastHour+1)
		}
	case factPeer:
		ip, dir := g.internalIP(), "internal"
		if v == peerInternet {
			ip, dir = g.externalIP(), "outbound"
			if a.peerIsSource {
				dir = "inbound"
			}
		}
		if a.peerIsSource {
			f.SrcIP = ip
		} else {
			f.DstIP = ip
		}
		f.Direction = dir
	case factCadence:
		w := f.Window
		var cv float64
		switch {
		case shoulder:
			cv = g.uniform(0.2, 0.5)
		case v == cadenceRegular:
			cv = g.regularCV()
		default:
			cv = byLevel(g, g.uniform(0.9, 2.2), g.uniform(0.7, 1.8), g.uniform(0.62, 1.2))
		}
		w.IntervalMean = F64(g.round(300/float64(*w.Conns)*g.uniform(0.9, 1.1), 1))
		w.IntervalCV = F64(g.round(cv, 2))
	}
}

// regularCV is a timer's coefficient of variation: tighter at easier levels.
func (g *gen) regularCV() float64 {
	return byLevel(g, g.uniform(0, 0.06), g.uniform(0.02, 0.11), g.uniform(0.04, regularCV))
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

// degrade removes what real sensors lose: Zeek leaves bytes and duration
// unset for connections without payload or still open at rotation, asset
// inventories are incomplete, and window counters come from collectors that
// keep different aggregates. Harder levels lose more; the losses are the
// same for both classes, and a loss of what decides a row makes it
// ambiguous.
func degrade(g *gen, f *Flow) {
	drop := [3]float64{0, 0.08, 0.16}[g.level]
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
	if r.Float64() < drop/2 {
		f.DeviceType = ""
	}
	if r.Float64() < drop/2 {
		f.Timestamp = time.Time{}
	}
	if f.Window == nil {
		return
	}
	if r.Float64() < drop/2 {
		f.Window = nil
		return
	}
	w := f.Window
	for _, p := range []**int{&w.Conns, &w.DistinctDstPorts, &w.DistinctDstHosts, &w.FailedAuth} {
		if r.Float64() < drop/2 {
			*p = nil
		}
	}
	for _, p := range []**float64{&w.RejectedRatio, &w.IntervalMean, &w.IntervalCV} {
		if r.Float64() < drop/2 {
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

// --- activity shapes ----------------------------------------------------
//
// A shape draws everything its activity's facts do not set, the same way
// in all four cells: the facts are applied afterwards (gen.apply). What
// an activity does not read is drawn from one distribution for both
// classes: the asset of a login target or a fan-out source, the hour of a
// check-in or a sweep, the peer of an upload or a sweep.

// shapeBulk is a large upload from an internal asset, to the internet or
// to another site inside the network.
func shapeBulk(g *gen) Flow {
	port := oneOf(g, 443, 443, 22, 21, 445)
	dst, dir := g.externalIP(), "outbound"
	if g.chance(0.3) {
		dst, dir = g.internalIP(), "internal"
	}
	f := g.tcpFlow(Flow{
		Direction: dir, Proto: "tcp", Service: map[int]string{443: "ssl", 22: "ssh", 21: "ftp", 445: "smb"}[port],
		SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: dst, DstPort: port,
		Duration: F64(g.round(g.logUniform(60, 14_000), 6)), ConnState: oneOf(g, "SF", "SF", "SF", "S1", "RSTO"),
	}, g.bytesIn(byLevel(g, 2e8, 5e7, 1.2e7), 4e10), g.bytesIn(20_000, 5e6))
	conns := g.intIn(1, 5)
	f.Window = g.window(conns, 1, 1, g.noiseFails(), g.uniform(0, 0.1), 0, 0, *f.OrigBytes*int64(conns))
	return f
}

// shapeCheckin is small requests on a timer from an internal asset.
func shapeCheckin(g *gen) Flow {
	port := oneOf(g, 443, 443, 8443, 8883, 80)
	gap := oneOf(g, 10.0, 15, 30, 60, 120)
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), Proto: "tcp", Service: map[int]string{443: "ssl", 8443: "ssl", 8883: "mqtt", 80: "http"}[port],
		SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstPort: port,
		Duration: F64(g.round(g.uniform(0.05, 2), 6)), ConnState: oneOf(g, "SF", "SF", "SF", "RSTO"),
	}, g.bytesIn(150, 2_500), g.bytesIn(60, byLevel(g, 2_000.0, 8_000, 30_000)))
	conns := max(int(300/gap), 2)
	f.Window = g.window(conns, 1, 1, g.noiseFails(), 0, gap*g.uniform(0.97, 1.03), g.regularCV(), *f.OrigBytes*int64(conns))
	return f
}

// shapeLogins is repeated failed logins at an internal asset, from the
// internet or from inside.
func shapeLogins(g *gen) Flow {
	port := oneOf(g, 22, 22, 3389, 443, 445, 21, 23)
	src, dir := g.externalIP(), "inbound"
	if g.chance(0.4) {
		src, dir = g.internalIP(), "internal"
	}
	f := g.tcpFlow(Flow{
		DeviceType: oneOf(g, "server", "jump-host", "vpn-gateway", "nas", "camera", "router", "switch", "printer", "domain-controller"), Direction: dir,
		Proto: "tcp", Service: map[int]string{22: "ssh", 3389: "rdp", 443: "ssl", 445: "smb", 21: "ftp", 23: "telnet"}[port],
		SrcIP: src, SrcPort: g.ephemeral(), DstIP: g.internalIP(), DstPort: port,
		Duration: F64(g.round(g.uniform(0.5, 6), 6)), ConnState: oneOf(g, "SF", "RSTO", "RSTR", "S1"),
	}, g.bytesIn(600, 3_200), g.bytesIn(500, 12_000))
	fails := byLevel(g, g.intIn(20, 300), g.intIn(6, 60), g.intIn(minFailedLogins, 14))
	conns := fails/g.intIn(1, 3) + g.intIn(1, 3)
	f.Window = g.window(conns, 1, 1, fails, g.uniform(0, 0.2), 0, 0, *f.OrigBytes*int64(conns))
	return f
}

// shapeFanout is an internal asset opening web connections to many hosts.
func shapeFanout(g *gen) Flow {
	port := oneOf(g, 443, 443, 80)
	f := g.tcpFlow(Flow{
		Timestamp: g.anyTime(), DeviceType: oneOf(g, append(append([]string{}, serverDevices...), endpointDevices...)...),
		Proto: "tcp", Service: map[int]string{443: "ssl", 80: "http"}[port], SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstPort: port,
		Duration: F64(g.round(g.logUniform(0.05, 60), 6)), ConnState: oneOf(g, "SF", "SF", "SF", "RSTO", "S0"),
	}, g.bytesIn(300, 8_000), g.bytesIn(1_000, 2e6))
	if f.ConnState == "S0" {
		f.OrigBytes, f.RespBytes, f.OrigPkts, f.RespPkts, f.Service = I64(0), I64(0), I64(int64(g.intIn(1, 3))), I64(0), ""
	}
	hosts := byLevel(g, g.intIn(40, 300), g.intIn(15, 120), g.intIn(minFanoutHosts, 40))
	conns := hosts * g.intIn(1, 3)
	f.Window = g.window(conns, g.intIn(1, 2), hosts, g.noiseFails(), g.uniform(0, 0.3), 0, 0, int64(conns)*int64(g.intIn(300, 8_000)))
	return f
}

// shapeSweep is an internal asset probing many ports, mostly refused or
// unanswered, inside the network or towards the internet.
func shapeSweep(g *gen) Flow {
	dst, dir := g.internalIP(), "internal"
	if g.chance(0.2) {
		dst, dir = g.externalIP(), "outbound"
	}
	f := Flow{
		Timestamp: g.anyTime(), Direction: dir, Proto: "tcp",
		SrcIP: g.internalIP(), SrcPort: g.ephemeral(), DstIP: dst, DstPort: g.intIn(1, 10_000),
		ConnState: oneOf(g, "S0", "REJ", "REJ", "RSTOS0"),
		OrigBytes: I64(0), RespBytes: I64(0), OrigPkts: I64(int64(g.intIn(1, 2))), RespPkts: I64(int64(g.intIn(0, 1))),
	}
	ports := byLevel(g, g.intIn(200, 3_000), g.intIn(40, 600), g.intIn(minSweepPorts, 80))
	conns := ports + g.intIn(0, 20)
	f.Window = g.window(conns, ports, g.intIn(1, 5), g.noiseFails(), g.uniform(0.6, 1), 0, 0, int64(conns)*60)
	return f
}

// noiseFails is the odd failed login any source collects at harder
// levels, always below what identifies repeated failed logins.
func (g *gen) noiseFails() int {
	return byLevel(g, 0, g.intIn(0, minFailedLogins-1), g.intIn(0, minFailedLogins-1))
}

// --- the sensor pass --------------------------------------------------------

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
	if g.chance(0.04) { // an asset missing from the inventory
		f.DeviceType = ""
	}
	f.History = g.history(f.Proto, f.ConnState)
}

// failedStates are the TCP states of a connection that never got going.
var failedStates = map[string]bool{"S0": true, "REJ": true, "RSTOS0": true, "SH": true, "OTH": true}
