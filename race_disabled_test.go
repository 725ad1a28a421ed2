//go:build !race

package contextsvc

const raceEnabled = false
