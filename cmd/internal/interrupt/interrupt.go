// Package interrupt gives the project's commands the context they run in:
// done at the first interrupt (SIGINT or SIGTERM), so the command stops
// in order, after which the signals have their default action again, so a
// second one ends the process at once for a user who will not wait.
//
// Each module that uses this package keeps a copy of it (modules version
// apart, so none imports another's internal packages); the repository's
// module checks (internal/tools/modules) hold the copies identical.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Context returns a context done at the first SIGINT or SIGTERM, and its
// stop function, which main defers. The signals are handed back before
// the context is done, so that a second signal ends the process at once
// from the moment the command sees the first.
func Context() (context.Context, context.CancelFunc) {
	signaled, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(signaled, func() { stop(); cancel() })
	return ctx, func() { stop(); cancel() }
}
