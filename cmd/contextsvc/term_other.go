//go:build !linux

package main

import "os"

// fileIsTerminal tells a terminal by its being a character device (which
// /dev/null is too: output to it is seen by no one, styled or not).
func fileIsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
