//go:build race

package configaudit

// raceEnabled lets the heaviest generator tests sample instead of scanning
// everything when the race detector slows the verifiers down.
const raceEnabled = true
