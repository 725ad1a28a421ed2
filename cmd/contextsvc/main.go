// Command contextsvc is the developer's loop of the Context Management
// Service in a terminal: contexts, their versions and exports, webhooks,
// a receiver that forwards deliveries to a local app (listen), events
// fired on demand (trigger), a copy of a deployment's contexts as a mock's
// state (snapshot), the mock server itself (mock) and the contract runner
// (conform).
//
//	go install github.com/contextsvc/contextsvc-go/cmd/contextsvc@latest
//	contextsvc mock -key sk_test_local &
//	export CONTEXTSVC_BASE_URL=http://127.0.0.1:8080/v1 CONTEXTSVC_API_KEY=sk_test_local
//	contextsvc contexts create --name Runbook --content '# Deploy'
//	contextsvc contexts list
//
// It reads CONTEXTSVC_BASE_URL and CONTEXTSVC_API_KEY (--base-url and
// --api-key override them), never prompts and never opens a browser, so
// it runs the same in CI as in a terminal. Every request to the service
// goes through the SDK's client: 429-aware retries, pacing (--plan) and
// typed errors.
//
// Output: tables and short summaries on stdout for people; with --json,
// the API's JSON as it came, for scripts. Errors go to stderr with their
// type, status, message and request id. Colour only on a terminal, and
// none under NO_COLOR.
//
// Exit status: 0 on success, 1 on an API or network error, 2 on a usage
// error (an unknown command or flag, a flag missing, flags that conflict,
// no API key). contextsvc mock and contextsvc conform exit as
// contextsvc-mock and contextsvc-conform do. See docs/cli.md.
package main

import (
	"os"

	"github.com/contextsvc/contextsvc-go/cmd/internal/interrupt"
)

func main() {
	// The first signal stops the command in order (listen removes its
	// webhook, trigger deletes what it created, mock shuts down); a
	// second one ends the process at once.
	ctx, stop := interrupt.Context()
	defer stop()
	os.Exit(run(ctx, os.Args[1:], newStreams(os.Stdin, os.Stdout, os.Stderr, os.Getenv)))
}
