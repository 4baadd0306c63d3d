package netlogs

import "slices"

// The site baseline (issue #41): what is normal on the network E1's flows
// come from. The system prompt states it, the generator labels by it and
// the features baseline reads by it. Whether a flow is normal depends on
// its activity (a large upload, a timer's check-ins, failed logins, a fan-out
// to web hosts, a port sweep) and on two context facts read together — the
// asset's role, the hour, the peer, the cadence — so no field, and no pair
// of fields, decides a flow on its own.

// A fact is one piece of context that, with a second one, decides whether
// an activity is normal. Each has two values; a record that does not show
// a fact (a "-", an hour outside both windows, an interval_cv between the
// two cadences) leaves it undecided.
type fact uint8

const (
	factRole    fact = iota // the internal asset's role: 0 server, 1 workstation or laptop
	factTime                // 0 working hours, 1 the batch window
	factPeer                // 0 a peer inside the network, 1 a peer on the internet
	factCadence             // 0 irregular (people), 1 machine-regular (timers)
)

// undecided is a fact's value when the record does not show it.
const undecided = -1

// Role, time, peer and cadence values.
const (
	roleServer   = 0
	roleEndpoint = 1

	timeWorking = 0
	timeBatch   = 1

	peerInternal = 0
	peerInternet = 1

	cadenceIrregular = 0
	cadenceRegular   = 1
)

// The site's windows and thresholds, in UTC hours and interval_cv.
const (
	batchFirstHour, batchLastHour     = 0, 5
	workingFirstHour, workingLastHour = 8, 18

	// regularCV and irregularCV bound the two cadences; a coefficient of
	// variation between them is neither.
	regularCV   = 0.15
	irregularCV = 0.6

	// bulkBytes is where an upload counts as large.
	bulkBytes = 10_000_000
)

// Devices by role. Every role-reading activity draws from the same two
// groups, so a device names a role and never an activity.
var (
	serverDevices   = []string{"server", "database-server", "file-server", "web-server", "app-server", "mail-server"}
	endpointDevices = []string{"workstation", "laptop", "desktop", "macbook"}
)

// readFact reads a fact from a rich record: its value, or undecided.
func readFact(rec record, f fact) int {
	switch f {
	case factRole:
		switch d := rec["device"]; {
		case slices.Contains(serverDevices, d):
			return roleServer
		case slices.Contains(endpointDevices, d):
			return roleEndpoint
		}
	case factTime:
		h, ok := rec.hour()
		switch {
		case !ok:
		case h >= batchFirstHour && h <= batchLastHour:
			return timeBatch
		case h >= workingFirstHour && h <= workingLastHour:
			return timeWorking
		}
	case factPeer:
		switch rec["direction"] {
		case "internal":
			return peerInternal
		case "inbound", "outbound":
			return peerInternet
		}
	case factCadence:
		cv, ok := rec.num("interval_cv")
		switch {
		case !ok:
		case cv <= regularCV:
			return cadenceRegular
		case cv >= irregularCV:
			return cadenceIrregular
		}
	}
	return undecided
}

// factNames name the facts in rationales.
var factNames = [...]string{factRole: "the asset's role", factTime: "the hour", factPeer: "the peer", factCadence: "the cadence"}
