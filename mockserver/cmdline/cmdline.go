// Package cmdline runs the two command lines of this module: the mock
// server's (contextsvc-mock) and the contract runner's (contextsvc-conform).
// The command contextsvc runs them as its mock and conform subcommands
// through this package, so each behaves the same whichever command starts
// it: the same flags, help, output and exit codes.
//
// Each function is a whole command: it parses args (the command line
// without the program's name), runs until the work is done or ctx is done,
// writes to stdout and stderr, and returns the process's exit code. name is
// the command as its help and usage errors name it ("contextsvc-mock" for
// a program of its own, "contextsvc mock" for a subcommand). A program's
// main needs nothing else:
//
//	os.Exit(cmdline.Mock(ctx, "contextsvc-mock", os.Args[1:], os.Stdout, os.Stderr))
//
// The flags, output and exit codes of each are documented in
// docs/mockserver.md ("The command") and docs/conformance.md.
package cmdline

import (
	"context"
	"io"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformcmd"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockcmd"
)

// Mock is the command contextsvc-mock: it serves the mock server until ctx
// is done, then shuts down in order and returns the exit code (0 after a
// clean stop, 1 when it could not serve or save its state, 2 on a usage
// error). With -hash-password it reads the password from the process's
// standard input.
func Mock(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	return mockcmd.RunAs(ctx, name, args, stdout, stderr)
}

// Conform is the command contextsvc-conform: it checks the deployment its
// flags and environment name against the API contract, writes the report on
// stdout and returns the exit code (0 when every check passed or was
// skipped, 1 when the server differs from the contract or the run was
// interrupted, 2 on a usage error, 3 when the server cannot be reached).
func Conform(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	return conformcmd.RunAs(ctx, name, args, stdout, stderr)
}
