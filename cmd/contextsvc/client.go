package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redact"
)

// defaultTimeout bounds each request, an export's download included.
const defaultTimeout = time.Minute

// apiFlags are the flags of every command that talks to the service.
type apiFlags struct {
	s       *streams
	baseURL string
	apiKey  string
	plan    string
	timeout time.Duration
}

// addAPIFlags gives cmd the service's flags.
func addAPIFlags(cmd *cobra.Command, s *streams) *apiFlags {
	f := &apiFlags{s: s}
	fs := cmd.Flags()
	fs.StringVar(&f.baseURL, "base-url", "", "the service's base `URL`, ending in /v1 (default $"+contextsvc.EnvBaseURL+")")
	// The key's default is never shown: it is a secret.
	fs.StringVar(&f.apiKey, "api-key", "", "the API `key` (default $"+contextsvc.EnvAPIKey+"; a flag's value shows in the process list, the variable's does not)")
	fs.StringVar(&f.plan, "plan", "", "pace requests to the key's `plan`: free, pro, business or enterprise=PERMINUTE/BURST (default none: a 429 is retried after the wait the service asks for)")
	fs.DurationVar(&f.timeout, "timeout", defaultTimeout, "time-out of each request, an export's download included")
	return f
}

// client makes the SDK's client. A missing key or base URL, or one the
// SDK refuses, is a usage error naming the variable to set.
func (f *apiFlags) client() (*contextsvc.Client, error) {
	base, err := f.base()
	if err != nil {
		return nil, err
	}
	key := f.apiKey
	if key == "" {
		key = f.s.getenv(contextsvc.EnvAPIKey)
	}
	if key == "" {
		return nil, usagef("no API key: set %s (contextsvc mock prints one) or give --api-key", contextsvc.EnvAPIKey)
	}
	if f.timeout <= 0 {
		return nil, usagef("--timeout must be positive")
	}
	opts := []contextsvc.Option{
		contextsvc.WithBaseURL(base),
		contextsvc.WithHTTPClient(&http.Client{Timeout: f.timeout, Transport: f.s.transport}),
		// --timeout bounds each request, its answer's headers included: a
		// longer one lifts the SDK's bounds on the call and on the headers
		// with it, so that it is the flag that cuts a slow export.
		contextsvc.WithCallTimeout(max(f.timeout, contextsvc.DefaultCallTimeout)),
		contextsvc.WithHeaderTimeout(max(f.timeout, contextsvc.DefaultHeaderTimeout)),
		contextsvc.WithUserAgent("contextsvc-cli/" + commandVersion()),
	}
	if d := f.s.debugLog(); d != nil {
		opts = append(opts, contextsvc.WithMiddleware(d.middleware()))
	}
	if f.plan != "" {
		plan, err := contextsvc.ParsePlan(f.plan)
		if err != nil {
			// The reason without the SDK's "contextsvc: invalid argument"
			// prefix, as every other flag's error reads.
			return nil, usagef("--plan: %s", strings.TrimPrefix(err.Error(), contextsvc.ErrInvalidArgument.Error()+": "))
		}
		opts = append(opts, contextsvc.WithPlan(plan))
	}
	// NewClient takes the key as an argument; an empty one would fall
	// back to the process's environment, not f.s.getenv's.
	c, err := contextsvc.NewClient(key, opts...)
	if err != nil {
		return nil, usagef("%s", strings.TrimPrefix(strings.TrimPrefix(err.Error(), contextsvc.ErrInvalidArgument.Error()+": "), "contextsvc: "))
	}
	return c, nil
}

// base is the base URL in use (the flag's, else the environment's); none
// is a usage error naming the variable to set.
func (f *apiFlags) base() (string, error) {
	f.s.api = f
	base := f.baseURL
	if base == "" {
		base = f.s.getenv(contextsvc.EnvBaseURL)
	}
	if base == "" {
		return "", usagef("no base URL: set %s (contextsvc mock prints it) or give --base-url", contextsvc.EnvBaseURL)
	}
	return base, nil
}

// hint is what a person should do about an answer of the service
// that says the configuration is wrong: a key refused (named by where it
// came from), or a base URL that does not serve the API; "" for any
// other error.
func (f *apiFlags) hint(err error) string {
	var ae *contextsvc.Error
	var admin *adminAPIError
	if !errors.As(err, &ae) || errors.As(err, &admin) {
		return ""
	}
	base := f.baseURL
	baseFrom := "--base-url"
	if base == "" {
		base, baseFrom = f.s.getenv(contextsvc.EnvBaseURL), contextsvc.EnvBaseURL
	}
	switch {
	case ae.StatusCode == http.StatusUnauthorized:
		if f.apiKey != "" {
			return fmt.Sprintf("The key given with --api-key was refused: give a key of the server at %s (contextsvc mock prints one).", redact.URL(base))
		}
		return fmt.Sprintf("The key came from %s: set it to a key of the server at %s (contextsvc mock prints one), or give --api-key.", contextsvc.EnvAPIKey, redact.URL(base))
	case ae.StatusCode == http.StatusNotFound && ae.Type == "":
		// The service's 404s all carry its error document.
		return fmt.Sprintf("%s (from %s) does not look like the service's /v1: its 404 is not the service's error document. "+
			"Check %s: the service's base URL ends in /v1 (contextsvc mock prints its own).", redact.URL(base), baseFrom, baseFrom)
	}
	return ""
}

// key is the API key in use (the flag's, else the environment's).
func (f *apiFlags) key() string {
	if f.apiKey != "" {
		return f.apiKey
	}
	return f.s.getenv(contextsvc.EnvAPIKey)
}

// rawBody keeps the body of a call's answer as it came, for --json: the
// SDK decodes it for the tables, and what it read is kept here too.
type rawBody struct{ buf bytes.Buffer }

// option is the request option that fills r with the answer of the call
// it is given to (the latest, for a call made more than once).
func (r *rawBody) option() contextsvc.RequestOption {
	return contextsvc.WithRequestMiddleware(contextsvc.Middleware{
		Call: func(ctx context.Context, call *contextsvc.Call, next contextsvc.CallNext) (*http.Response, error) {
			return r.capture(next(ctx))
		},
	})
}

// capture makes r keep what the SDK reads of resp's body, from now on.
func (r *rawBody) capture(resp *http.Response, err error) (*http.Response, error) {
	if err == nil && resp != nil && resp.Body != nil {
		r.buf.Reset()
		resp.Body = teeBody{Reader: io.TeeReader(resp.Body, &r.buf), Closer: resp.Body}
	}
	return resp, err
}

// bytes returns the body read so far.
func (r *rawBody) bytes() []byte { return r.buf.Bytes() }

type teeBody struct {
	io.Reader
	io.Closer
}
