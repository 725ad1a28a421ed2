//go:build !linux

package redistest

import "os/exec"

// setProcAttr does nothing where the kernel cannot tie the server's life
// to its owner's; Stop and Close still end it.
func setProcAttr(*exec.Cmd) {}
