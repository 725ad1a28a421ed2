// Command contextsvc-conform checks a deployment of the Context Management
// Service (staging, production, another mock) against the API contract the
// SDK and its mock server follow, and says for each difference whether the
// SDK tolerates it:
//
//	CONTEXTSVC_BASE_URL=https://staging.example.com/v1 CONTEXTSVC_API_KEY=sk_… \
//	  go run ./cmd/contextsvc-conform -plan pro
//
// It prints a report on stdout (-json for machines): each check passed,
// failed (with the request, what the contract says, what came back and
// where it breaks mockserver/openapi.yaml) or skipped; the SDK tolerance
// list; and what it created and could not delete. Progress goes to stderr.
//
// It creates contexts named contextsvc-conform-<run id> … and deletes them
// at the end (also when interrupted); -read-only runs only the checks that
// create nothing. With -receiver-listen (and -receiver-url, the address the
// server reaches it at) it registers a webhook, which the /v1 API cannot
// delete: the report names it. It paces its requests with the SDK's
// limiter for -plan, so it never trips the rate limit (unless asked to,
// -provoke-429). Keys and webhook secrets are never printed.
//
// Before the checks it makes sure the server can be reached: when it
// cannot (connection refused, DNS, TLS, a time-out), it says so once, and
// why, and runs no check.
//
// Exit status: 0 when every check passed (or was skipped), 1 when the
// server differs from the contract or the run was interrupted, 2 on a
// usage error, 3 when the server cannot be reached. See
// docs/conformance.md.
package main

import (
	"os"

	"github.com/contextsvc/contextsvc-go/cmd/internal/interrupt"
	"github.com/contextsvc/contextsvc-go/mockserver/cmdline"
)

func main() {
	// The first signal stops the run, which then deletes what it created;
	// a second one ends the process at once.
	ctx, stop := interrupt.Context()
	defer stop()
	os.Exit(cmdline.Conform(ctx, "contextsvc-conform", os.Args[1:], os.Stdout, os.Stderr))
}
