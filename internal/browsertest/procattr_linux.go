package browsertest

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts chromium in its own process group, so a Ctrl-C in the
// terminal reaches only the Go program (which stops the browser in order)
// and killGroup reaches every process chromium forked, and has the kernel
// kill the browser if the Go program dies without stopping it (a test
// binary killed by its time-out, say). The browser's children (zygotes,
// renderers, the GPU and network processes, crashpad) exit when it does,
// so no browser outlives its owner.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills what is left of the process group pgid: after the
// browser exits its children follow within a fraction of a second, but
// one that hangs must not outlive the test binary.
func killGroup(pgid int) {
	syscall.Kill(-pgid, syscall.SIGKILL)
}
