//go:build race

package cli

// raceEnabled lets full-size data tests shrink when the race detector slows
// the verifiers down about fivefold.
const raceEnabled = true
