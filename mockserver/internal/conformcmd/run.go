package conformcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/cliflags"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance"
)

// Exit codes.
const (
	exitPassed  = 0
	exitDiffers = 1 // a check failed, or the run was interrupted
	exitUsage   = 2 // bad flags or configuration
	// exitUnreachable: the server could not be reached (connection
	// refused, DNS, TLS, a time-out): nothing was checked.
	exitUnreachable = 3
)

// envReadKey names a key of read scope, for the 403 checks.
const envReadKey = "CONTEXTSVC_READ_API_KEY"

// Run parses args, runs the checks and writes the report; it returns the
// exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunAs(ctx, "contextsvc-conform", args, stdout, stderr)
}

// RunAs is Run for the command called name (contextsvc conform), which
// its help and messages name.
func RunAs(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cfg := conformance.Config{Document: mockserver.OpenAPI()}
	plan := planFlag{name: "free"}
	var asJSON, quiet bool
	// The variables are read after the flags, as the keys' are: a
	// default read from the environment would show in the help.
	fs.StringVar(&cfg.BaseURL, "base-url", "", "the server's base `URL`, ending in /v1 (default $"+contextsvc.EnvBaseURL+")")
	// The keys come from the environment by default: a flag's value shows
	// in the process list. Their defaults are never printed.
	fs.StringVar(&cfg.APIKey, "api-key", "", "the API `key` of the account to work in, write scope unless --read-only (default $"+contextsvc.EnvAPIKey+")")
	fs.StringVar(&cfg.ReadKey, "read-key", "", "a `key` of read scope in the same account, to check that its writes get 403 (default $"+envReadKey+"; without it the check is skipped)")
	fs.Var(&plan, "plan", "the key's `plan`, which paces every request and which X-RateLimit-Limit must state: free, pro, business, enterprise=PERMINUTE/BURST, or unlimited (no pacing, no X-RateLimit-* headers expected)")
	fs.BoolVar(&cfg.ReadOnly, "read-only", false, "run only the checks that create nothing, even on a server that does not follow the contract")
	fs.StringVar(&cfg.ReceiverListen, "receiver-listen", "", "`address` for the run's webhook receiver to listen on (127.0.0.1:0, :9090); without it no webhook is registered and the delivery checks are skipped")
	fs.StringVar(&cfg.ReceiverURL, "receiver-url", "", "the `URL` the server sends deliveries to, reaching the receiver (a tunnel to --receiver-listen); default http://<the listening address>/, which only a server on this machine reaches")
	fs.BoolVar(&cfg.SkipRetry, "skip-retry", false, "skip the check of a failed delivery's retry, which waits for the server's schedule (1 minute on the service)")
	fs.DurationVar(&cfg.DeliveryTimeout, "delivery-timeout", conformance.DefaultDeliveryTimeout, "how long to wait for webhook deliveries to arrive")
	fs.DurationVar(&cfg.RetryTimeout, "retry-timeout", conformance.DefaultRetryTimeout, "how long to wait for the retry of the delivery attempt the receiver fails")
	fs.BoolVar(&cfg.Provoke429, "provoke-429", false, "also check the 429: send unpaced requests until the server refuses one, then wait until the key's bucket is full; other clients of the key meet 429s meanwhile")
	requestTimeout := fs.Duration("request-timeout", conformance.DefaultRequestTimeout, "time-out of each request")
	fs.StringVar(&cfg.RunID, "run-id", "", "the run's `id` in the names of what it creates (a-z, 0-9; default random)")
	fs.BoolVar(&asJSON, "json", false, "write the report as JSON")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines on stderr")
	header := fmt.Sprintf("Usage: %s [flags]\n\n"+
		"Checks the server at $%s with the key $%s against the API contract the SDK and\n"+
		"its mock server follow, and says whether the SDK tolerates each difference.\n"+
		"Exit status: 0 all passed, 1 a difference (or interrupted), 2 usage, 3 the server cannot be reached.\n"+
		"See docs/conformance.md.\n\nFlags:\n",
		name, contextsvc.EnvBaseURL, contextsvc.EnvAPIKey)
	if err := cliflags.Parse(fs, args, stdout, header); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPassed
		}
		cliflags.Report(stderr, name, err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		cliflags.Report(stderr, name, fmt.Errorf("unexpected argument %q (flags only)", fs.Arg(0)))
		return exitUsage
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = os.Getenv(contextsvc.EnvBaseURL)
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv(contextsvc.EnvAPIKey)
	}
	if cfg.ReadKey == "" {
		cfg.ReadKey = os.Getenv(envReadKey)
	}
	if *requestTimeout <= 0 {
		cliflags.Report(stderr, name, errors.New("-request-timeout must be positive"))
		return exitUsage
	}
	if err := plan.apply(&cfg); err != nil {
		cliflags.Report(stderr, name, fmt.Errorf("-plan: %w", err))
		return exitUsage
	}
	cfg.HTTPClient = newHTTPClient(*requestTimeout)
	if !quiet {
		cfg.Progress = stderr
	}
	rep, err := conformance.Run(ctx, cfg)
	if errors.Is(err, conformance.ErrConfig) {
		cliflags.Report(stderr, name, err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitDiffers
	}
	if asJSON {
		if rep.Unreachable != nil {
			// The text report says it; a script reading the JSON has a
			// person reading its stderr.
			fmt.Fprintf(stderr, "%s: cannot reach the server: %s\n", name, rep.Unreachable.Message)
		}
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: writing the report: %v\n", name, err)
		return exitDiffers
	}
	if rep.Unreachable != nil {
		return exitUnreachable
	}
	if !rep.Passed() {
		return exitDiffers
	}
	return exitPassed
}

// newHTTPClient is the run's client: the default transport's settings
// (proxy from the environment included), and a time-out per request.
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout}
}
