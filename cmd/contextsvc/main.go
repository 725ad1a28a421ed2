// Command contextsvc is the developer's loop of the Context Management
// Service in a terminal: contexts, their versions and exports, webhooks,
// a receiver that forwards deliveries to a local app (listen), events
// fired on demand with data of your own (trigger), a copy of a
// deployment's contexts as a mock's state (snapshot), the mock server
// itself (mock) and the contract runner (conform); on the mock, its event
// log and deliveries, an event sent again (events, deliveries), its clock,
// chaos mode and reset.
//
//	go install github.com/contextsvc/contextsvc-go/cmd/contextsvc@latest
//	go install ./cmd/contextsvc   # from a clone, at its root
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
// Output: tables and short summaries on stdout for people (off a
// terminal, a table is its rows, tab-separated); with --json, the JSON as
// it came, and --jq to filter it, for scripts. --debug shows each request
// on stderr, secrets masked. Errors go to stderr with their type, status,
// message and request id. Colour only on a terminal, and none under
// NO_COLOR.
//
// Exit status: 0 on success, 1 on an API or network error, 2 on a usage
// error (an unknown command or flag, a flag missing, flags that conflict,
// no API key), 3 for what the server does not support (a deployment, for
// what only the mock's admin API does). contextsvc mock and contextsvc
// conform exit as contextsvc-mock and contextsvc-conform do. See
// docs/cli.md.
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
