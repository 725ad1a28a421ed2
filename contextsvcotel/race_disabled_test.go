//go:build !race

package contextsvcotel_test

const raceEnabled = false
