//go:build !linux

package testproc

import "os/exec"

// OwnGroup does nothing where the kernel cannot tie a program's life to
// its owner's; the helpers' Close still ends it.
func OwnGroup(*exec.Cmd) {}

// KillGroup does nothing where OwnGroup made no process group.
func KillGroup(int) {}
