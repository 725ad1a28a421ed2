package testproc

import (
	"os/exec"
	"syscall"
)

// OwnGroup puts the program cmd starts in a process group of its own, so
// a Ctrl-C in the terminal reaches only the Go program (which stops the
// program in order) and KillGroup reaches every process it forked, and
// has the kernel kill it if the Go program dies without stopping it (a
// test binary killed by its time-out, say), so no program outlives the
// test binary that started it.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// KillGroup kills what is left of the process group pgid that OwnGroup
// made: a child that hangs after its parent exited must not outlive the
// test binary.
func KillGroup(pgid int) {
	syscall.Kill(-pgid, syscall.SIGKILL)
}
