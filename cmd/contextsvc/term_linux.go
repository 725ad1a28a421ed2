package main

import (
	"os"
	"syscall"
	"unsafe"
)

// fileIsTerminal asks the file's device for its terminal settings, which
// only a terminal has.
func fileIsTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
