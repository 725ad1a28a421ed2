// Command contextsvc-mock serves the in-memory Context Management Service
// (package mockserver) for local development and tests in other languages.
//
//	go run ./mockserver/cmd/contextsvc-mock
//
// It listens on 127.0.0.1:8080 by default and prints, on stdout, the base
// URL and a ready API key (the first key) as two lines that, pasted into
// a shell (or sourced), set the variables for the commands run next:
//
//	export CONTEXTSVC_BASE_URL=http://127.0.0.1:8080/v1
//	export CONTEXTSVC_API_KEY=sk_test_…
//
// Listening on every interface (-addr 0.0.0.0:8080 or :8080), it prints
// http://127.0.0.1:8080/v1, which works on this machine, and logs the
// URL with the machine's name for others.
//
// The admin routes (/_mock/) and the dashboard need no credentials on
// loopback. With -admin-auth-file FILE, an htpasswd file of
// user:bcrypt-hash lines (-hash-password USER writes one, the password
// read from stdin, as does htpasswd -nbBC 10 USER PASSWORD),
// they ask for a user name and password (HTTP Basic: a browser prompts,
// curl takes -u USER). An -addr beyond loopback with the admin routes on
// needs that file: without it the start is refused (exit 2), unless
// -admin-insecure says that anyone who reaches the port may use them, or
// -admin=false turns them off.
//
// Everything else (each request, each webhook delivery attempt, startup
// and shutdown) is logged with log/slog to stderr. Run it with -h for the
// flags. On SIGINT or SIGTERM it stops accepting requests, lets running
// webhook deliveries finish until -shutdown-timeout, and exits 0; a second
// signal ends it at once. Bad flags exit 2; a failure to listen exits 1.
//
// With -state-file PATH, the contexts, webhooks and pending deliveries
// survive a restart: the file is loaded at start, written every
// -state-interval while they change and at shutdown (atomically, mode
// 0600: it holds webhook secrets). A file that cannot be loaded exits 1
// at start, naming it and what is wrong, and is left as it is; a last
// write that fails exits 1 too. GET and PUT /_mock/state download and
// replace the same document.
//
// With -otel, or with OTEL_EXPORTER_OTLP_ENDPOINT set, every request,
// event and webhook delivery attempt is traced and measured with
// OpenTelemetry and exported over OTLP/HTTP (the endpoint's default is
// http://localhost:4318; OTEL_SERVICE_NAME names the service, by default
// contextsvc-mock); each attempt carries its traceparent to the receiver.
// -otel=false keeps it off whatever the environment says.
package main

import (
	"os"

	"github.com/contextsvc/contextsvc-go/mockserver/cmdline"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/interrupt"
)

func main() {
	// The first signal begins the graceful stop; a second one ends the
	// process at once, for a user who will not wait for a hanging
	// receiver.
	ctx, stop := interrupt.Context()
	defer stop()
	os.Exit(cmdline.Mock(ctx, "contextsvc-mock", os.Args[1:], os.Stdout, os.Stderr))
}
