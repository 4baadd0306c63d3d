//go:build !race

package configaudit

const raceEnabled = false
