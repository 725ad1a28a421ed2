package redistest

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts redis-server in its own process group, so a Ctrl-C in
// the terminal reaches only the Go program (which stops the server in
// order), and has the kernel kill it if the Go program dies without
// stopping it (a test binary killed by its time-out, say), so no server
// outlives its owner.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
