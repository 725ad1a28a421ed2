//go:build !race

package mockserver

// raceEnabled: see race_enabled_test.go.
const raceEnabled = false
