// Command receiver is a standalone webhook receiver for the Context
// Management Service: it verifies each delivery's signature with the SDK's
// NewWebhookHandler and logs the verified events with log/slog.
//
//	CONTEXTSVC_WEBHOOK_SECRET=whsec_... go run ./examples/receiver -addr 127.0.0.1:9090
//
// Register http://127.0.0.1:9090/webhooks/contextsvc with the same secret
// (the mock server accepts http for loopback hosts). While rotating the
// secret, also set CONTEXTSVC_WEBHOOK_PREVIOUS_SECRET to the old one: both
// verify until the old one is retired. Prefer the environment to the
// -secret flag, which other users of the machine can read in the process
// list. SIGINT or SIGTERM stops it gracefully: deliveries being handled
// finish first.
//
// Events arrive in no guaranteed order: a context.version.created may come
// before its context.created, and a retried event after later ones. A
// receiver that acts on them must not assume an order (it can compare the
// data's version numbers, or read the context itself).
//
// It listens to the internet, so its server has a time-out on every read
// and write, and the handler bounds each body's size and time: a sender
// that trickles or never finishes a body holds a connection for seconds,
// not for as long as it likes.
//
// Next to a mock server on a fake clock (contextsvc-mock -fake-clock) that
// has been advanced, the events' timestamps are ahead of this machine's
// clock, and the default replay window refuses them as "in the future"
// (400); one never advanced falls behind, and after 27 hours its events
// are refused as too old. Run it with -replay-window 0 then: no time
// check (and no deduplication, which needs a window).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Environment variables read when the corresponding flag is not given.
const (
	envSecret         = "CONTEXTSVC_WEBHOOK_SECRET"
	envPreviousSecret = "CONTEXTSVC_WEBHOOK_PREVIOUS_SECRET"
)

// config is what the flags and the environment set.
type config struct {
	addr           string
	path           string
	secret         string
	previousSecret string
	// replayWindow is how old an event may be; 0 turns the time check
	// (and the deduplication) off.
	replayWindow time.Duration
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		logger.Error("bad configuration", "err", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		logger.Error("cannot listen", "err", err)
		os.Exit(1)
	}
	if err := serve(ctx, ln, cfg, logger); err != nil {
		logger.Error("receiver stopped", "err", err)
		os.Exit(1)
	}
}

// parseConfig reads the flags in args, falling back to getenv for the
// secrets. A missing secret is an error: a receiver without one would
// accept nothing.
func parseConfig(args []string, getenv func(string) string, errOut io.Writer) (config, error) {
	fs := flag.NewFlagSet("receiver", flag.ContinueOnError)
	fs.SetOutput(errOut)
	var cfg config
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:9090", "address to listen on")
	fs.StringVar(&cfg.path, "path", "/webhooks/contextsvc", "URL path of the webhook endpoint")
	fs.StringVar(&cfg.secret, "secret", "", "signing secret (default $"+envSecret+")")
	fs.StringVar(&cfg.previousSecret, "previous-secret", "", "secret being rotated out, also accepted (default $"+envPreviousSecret+")")
	fs.DurationVar(&cfg.replayWindow, "replay-window", contextsvc.DefaultReplayWindow,
		"how old a delivery's event may be (events more than 5 minutes in the future are refused too); 0 turns the time check off, "+
			"and with it deduplication by event id: use 0 next to a mock server whose fake clock was advanced (-fake-clock), whose events are ahead of this clock")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if cfg.replayWindow < 0 {
		return config{}, fmt.Errorf("-replay-window %s is negative: give a duration, or 0 for no time check", cfg.replayWindow)
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.secret == "" {
		cfg.secret = getenv(envSecret)
	}
	if cfg.previousSecret == "" {
		cfg.previousSecret = getenv(envPreviousSecret)
	}
	if cfg.secret == "" {
		return config{}, fmt.Errorf("no signing secret: set %s or pass -secret", envSecret)
	}
	return cfg, nil
}

// newMux returns the receiver's routes: the verifying webhook handler at
// cfg.path, which logs each verified event, and nothing else.
func newMux(cfg config, logger *slog.Logger) (*http.ServeMux, error) {
	var opts []contextsvc.WebhookOption
	if cfg.previousSecret != "" {
		opts = append(opts, contextsvc.WithWebhookSecrets(cfg.previousSecret))
	}
	// A window of 0 turns the time check and the deduplication off.
	opts = append(opts, contextsvc.WithReplayWindow(cfg.replayWindow, contextsvc.DefaultFutureSkew))
	// Refused deliveries (bad signature, replays) are logged by the handler
	// itself, without secrets or bodies.
	opts = append(opts, contextsvc.WithWebhookLogger(logger))
	h, err := contextsvc.NewWebhookHandler(cfg.secret, func(ctx context.Context, ev *contextsvc.Event) error {
		// Events come in any order (a version's event may come before its
		// context's): this one only logs, so it needs none.
		logger.InfoContext(ctx, "event verified", eventAttrs(ev)...)
		return nil
	}, opts...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+cfg.path, h)
	return mux, nil
}

// eventAttrs describes an event for the log: its id and type, and the
// fields of its data that say what happened.
func eventAttrs(ev *contextsvc.Event) []any {
	attrs := []any{"id", ev.ID, "type", string(ev.Type), "timestamp", ev.Timestamp}
	data, err := ev.ParseData()
	if err != nil {
		return append(attrs, "data_error", err.Error())
	}
	switch d := data.(type) {
	case *contextsvc.ContextCreatedData:
		attrs = append(attrs, "context", d.ContextID, "name", d.Name, "version", d.Version)
	case *contextsvc.ContextUpdatedData:
		attrs = append(attrs, "context", d.ContextID, "version", d.Version,
			"sections_modified", d.Changes.SectionsModified, "word_count_delta", d.Changes.WordCountDelta)
	case *contextsvc.ContextDeletedData:
		attrs = append(attrs, "context", d.ContextID, "name", d.Name)
	case *contextsvc.ContextPublishedData:
		attrs = append(attrs, "context", d.ContextID, "version", d.Version)
	case *contextsvc.ContextVersionCreatedData:
		attrs = append(attrs, "context", d.ContextID, "version", d.Version)
	case *contextsvc.TeamMemberAddedData:
		attrs = append(attrs, "team", d.TeamID, "user", d.UserID, "role", d.Role)
	case *contextsvc.TeamMemberRemovedData:
		attrs = append(attrs, "team", d.TeamID, "user", d.UserID, "role", d.Role)
	case *contextsvc.ExportCompletedData:
		attrs = append(attrs, "context", d.ContextID, "format", d.Format, "size_bytes", d.SizeBytes)
	}
	// A type this SDK does not know yet is logged by id and type only.
	return attrs
}

// newServer returns the receiver's server: a time-out on every read and
// write, since http.ListenAndServe's server has none and a sender may be
// anyone.
func newServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,  // the request's headers
		ReadTimeout:       15 * time.Second, // headers and body (the handler gives a body 10 s)
		WriteTimeout:      30 * time.Second, // from the headers to the end of the answer
		IdleTimeout:       time.Minute,      // a kept-alive connection between deliveries
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// serve answers deliveries on ln until ctx is done, then shuts down
// gracefully: it stops accepting, and waits up to 10 s for deliveries being
// handled.
func serve(ctx context.Context, ln net.Listener, cfg config, logger *slog.Logger) error {
	mux, err := newMux(cfg, logger)
	if err != nil {
		return err
	}
	srv := newServer(mux, logger)
	logger.Info("receiving webhooks", "url", "http://"+ln.Addr().String()+cfg.path,
		"rotation", cfg.previousSecret != "", "replayWindow", cfg.replayWindow)
	if cfg.replayWindow == 0 {
		logger.Warn("replay protection is off (-replay-window 0): events of any age are handled, and a redelivered event is handled again")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
