//go:build !linux

package browsertest

import "os/exec"

// setProcAttr does nothing where the kernel cannot tie the browser's life
// to its owner's; Close still ends it.
func setProcAttr(*exec.Cmd) {}

// killGroup does nothing where setProcAttr made no process group.
func killGroup(int) {}
