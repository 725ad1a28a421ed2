// Command quickstart shows the whole SDK at work in a few seconds, with
// nothing to set up:
//
//	go run ./examples/quickstart
//
// It starts the mock server in-process on a loopback port, starts a webhook
// receiver on another one (built on contextsvc.NewWebhookHandler, which
// verifies every delivery's signature), registers a webhook for every event
// type, and then, with the client, creates a context, updates it twice,
// lists, reads the versions, exports Markdown and PDF, and deletes it. It
// prints each step, and each event as the receiver verifies it, waits until
// every event the server recorded has arrived, and exits 0. It leaves no
// file behind: the PDF is only counted, unless -pdf names a file to write
// it to.
//
// To run the same steps against another server, set CONTEXTSVC_BASE_URL
// (ending in /v1) and CONTEXTSVC_API_KEY. A server elsewhere cannot reach a
// receiver on this machine, so then no webhook is registered unless you
// give a public receiver URL with -receiver-url (or CONTEXTSVC_RECEIVER_URL)
// and its secret in CONTEXTSVC_WEBHOOK_SECRET; run examples/receiver there
// to see the events. At the end the webhook is removed where the server
// allows it (a mock server, through its admin API); on a deployment, whose
// /v1 API cannot delete a webhook, the quickstart says that it stays.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// Environment variables read besides the client's own (EnvBaseURL,
// EnvAPIKey).
const (
	envReceiverURL   = "CONTEXTSVC_RECEIVER_URL"
	envWebhookSecret = "CONTEXTSVC_WEBHOOK_SECRET"
)

// config is what the flags and the environment set.
type config struct {
	// baseURL and apiKey select a remote server; both empty means the
	// embedded mock server.
	baseURL, apiKey string
	// receiverURL is a public URL of a receiver for a remote server, and
	// webhookSecret its signing secret.
	receiverURL, webhookSecret string
	// pdfPath is the file the exported PDF is written to; "" means it is
	// only counted, so a run leaves no file behind.
	pdfPath string
	// wait bounds the wait for each step's webhook deliveries; 0 means no
	// bound but ctx's.
	wait time.Duration
}

func main() {
	cfg := config{
		baseURL:       os.Getenv(contextsvc.EnvBaseURL),
		apiKey:        os.Getenv(contextsvc.EnvAPIKey),
		webhookSecret: os.Getenv(envWebhookSecret),
	}
	flag.StringVar(&cfg.receiverURL, "receiver-url", os.Getenv(envReceiverURL),
		"public URL of a webhook receiver, for a remote server (default $"+envReceiverURL+")")
	flag.DurationVar(&cfg.wait, "wait", 10*time.Second, "how long to wait for each step's webhook deliveries (0: as long as it takes)")
	flag.StringVar(&cfg.pdfPath, "pdf", "", "write the exported PDF to this `file` (by default it is only counted, and nothing is written)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run runs the quickstart, printing to w. It returns an error if a step
// fails or an expected event does not arrive in time.
func run(ctx context.Context, w io.Writer, cfg config) error {
	out := &printer{w: w}
	start := time.Now()
	if (cfg.baseURL == "") != (cfg.apiKey == "") {
		return fmt.Errorf("set both %s and %s to use another server, or neither to use the embedded mock server",
			contextsvc.EnvBaseURL, contextsvc.EnvAPIKey)
	}
	var err error
	if cfg.baseURL == "" {
		err = runEmbedded(ctx, out, cfg)
	} else {
		err = runRemote(ctx, out, cfg)
	}
	if err != nil {
		return err
	}
	out.printf("\nDone in %.1fs.\n", time.Since(start).Seconds())
	return nil
}

// runEmbedded starts the mock server and a receiver on loopback ports,
// runs the steps, and waits for every event to be delivered and verified.
func runEmbedded(ctx context.Context, out *printer, cfg config) error {
	srv := mockserver.New(
		// The service retries a failed delivery after 1 min, 5 min, 30 min…;
		// compressed, a receiver hiccup still ends within a second.
		mockserver.WithRetrySchedule([]time.Duration{50 * time.Millisecond, 100 * time.Millisecond,
			200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}),
		mockserver.WithDeliveryTimeout(5*time.Second),
	)
	api, err := listen(srv)
	if err != nil {
		return err
	}
	defer func() {
		// Stop delivering first, then the servers.
		closeCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Close(closeCtx)
		api.Close()
	}()
	baseURL := "http://" + api.addr + "/v1"

	secret := rand.Text() // a fresh signing secret for this run
	rcv := newReceiver()
	hook, err := contextsvc.NewWebhookHandler(secret, rcv.handle)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks", hook)
	receiver, err := listen(mux)
	if err != nil {
		return err
	}
	defer receiver.Close()
	receiverURL := "http://" + receiver.addr + "/webhooks"

	out.printf("Mock server   %s (in-process, its default key)\n", baseURL)
	out.printf("Receiver      %s (verifies each delivery with NewWebhookHandler)\n\n", receiverURL)

	client, err := contextsvc.NewClient(srv.DefaultKey().Token, contextsvc.WithBaseURL(baseURL))
	if err != nil {
		return err
	}
	if _, err := registerWebhook(ctx, out, client, receiverURL, secret); err != nil {
		return err
	}
	// After each step, wait until the receiver has verified the events
	// the step fired, and show them under it in the order the server
	// recorded them (deliveries run concurrently, so they may arrive in
	// another order). Every event is handed to the delivery engine before
	// the call that fired it returns, so the server's log is complete.
	account := srv.DefaultKey().Account
	var want []string // every event id of the account, in the server's order
	shown := 0
	settle := func(ctx context.Context) error {
		want = want[:0]
		for _, ev := range srv.Events() {
			if ev.Account == account {
				want = append(want, ev.ID)
			}
		}
		waitCtx, cancel := ctx, context.CancelFunc(func() {})
		if cfg.wait > 0 {
			waitCtx, cancel = context.WithTimeout(ctx, cfg.wait)
		}
		defer cancel()
		if err := rcv.waitFor(waitCtx, want); err != nil {
			return err
		}
		for _, id := range want[shown:] {
			out.printf("   <- webhook verified: %s\n", rcv.description(id))
		}
		shown = len(want)
		return nil
	}
	if err := steps(ctx, out, client, cfg.pdfPath, settle); err != nil {
		return err
	}
	if err := settle(ctx); err != nil {
		return err
	}
	failedAttempts := 0
	for _, d := range srv.Deliveries(mockserver.DeliveryFilter{}) {
		for _, a := range d.Attempts {
			if !a.Succeeded() {
				failedAttempts++
			}
		}
	}
	out.printf("\nAll %d events delivered, verified and handled once each (%d attempts failed and were retried).\n",
		len(want), failedAttempts)
	return nil
}

// runRemote runs the steps against the server in cfg. Webhooks are
// registered only when a public receiver URL is given.
func runRemote(ctx context.Context, out *printer, cfg config) error {
	client, err := contextsvc.NewClient(cfg.apiKey, contextsvc.WithBaseURL(cfg.baseURL))
	if err != nil {
		return err
	}
	out.printf("Server        %s (from %s)\n", client.BaseURL(), contextsvc.EnvBaseURL)
	switch {
	case cfg.receiverURL == "":
		out.printf("Webhooks      not registered: a server elsewhere cannot reach a receiver on this machine.\n")
		out.printf("              Give a public receiver URL with -receiver-url (or %s) and its secret in %s;\n", envReceiverURL, envWebhookSecret)
		out.printf("              run examples/receiver there to see the events.\n\n")
	case cfg.webhookSecret == "":
		return fmt.Errorf("a receiver URL needs its signing secret in %s", envWebhookSecret)
	default:
		out.printf("Receiver      %s (events are shown by that receiver, not here)\n\n", cfg.receiverURL)
		id, err := registerWebhook(ctx, out, client, cfg.receiverURL, cfg.webhookSecret)
		if err != nil {
			return err
		}
		// The /v1 API cannot delete a webhook; the mock's admin API can.
		// Removed after the steps, also when one fails or the run is
		// interrupted, so a run leaves nothing registered where it can.
		defer removeWebhook(out, client.BaseURL(), id)
	}
	// The events go to the remote receiver, which shows them.
	return steps(ctx, out, client, cfg.pdfPath, func(context.Context) error { return nil })
}

func registerWebhook(ctx context.Context, out *printer, client *contextsvc.Client, url, secret string) (string, error) {
	wh, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
		URL: url, Events: contextsvc.AllEventTypes(), Secret: secret,
	})
	if err != nil {
		return "", fmt.Errorf("register webhook: %w", err)
	}
	out.printf("Registered webhook %s for all %d event types\n", wh.ID, len(wh.Events))
	return wh.ID, nil
}

// removeWebhook deletes the webhook id through the mock server's admin API
// (DELETE /_mock/webhooks/{id} at the base URL's origin) when the server is
// a mock that allows it, and otherwise says that it stays and how to
// remove it. It runs after ctx may have ended (an interrupted run), so it
// has its own bound.
func removeWebhook(out *printer, baseURL, id string) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return
	}
	u.Path, u.RawQuery = "/_mock/webhooks/"+url.PathEscape(id), ""
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, u.String(), nil)
	if err != nil {
		return
	}
	status := 0
	if resp, err := http.DefaultClient.Do(req); err == nil {
		status = resp.StatusCode
		resp.Body.Close()
	}
	switch {
	case status >= 200 && status < 300:
		out.printf("Removed webhook %s (through the mock server's admin API)\n", id)
	case status == http.StatusUnauthorized:
		out.printf("Webhook %s stays registered: the mock server's admin API asks for credentials;\n", id)
		out.printf("              remove it with: curl -u USER -X DELETE %s\n", u)
	default:
		out.printf("Webhook %s stays registered: the /v1 API cannot delete a webhook.\n", id)
		out.printf("              Remove it where the service's webhooks are managed; until then its deliveries go to the receiver.\n")
	}
}

const (
	firstDraft = `# Deploy

Build the image and push it.

# Rollback

Redeploy the previous tag.
`
	secondDraft = `# Deploy

Build the image, tag it with the commit, and push it.

# Rollback

Redeploy the previous tag.

# Contacts

The on-call engineer.
`
)

// steps runs the client's side of the quickstart: every operation once.
// After printing each step it calls settle, which shows the step's events.
// The PDF is written to pdfPath, or only counted when it is "".
func steps(ctx context.Context, out *printer, client *contextsvc.Client, pdfPath string, settle func(context.Context) error) error {
	c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{
		Name: "Quickstart runbook", Content: firstDraft, Tags: []string{"quickstart", "ops"},
	})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	out.printf("1. Created   %s %q version %d, tags %v\n", c.ID, c.Name, c.Version, c.Tags)
	if err := settle(ctx); err != nil {
		return err
	}

	c, err = client.Contexts.Update(ctx, c.ID, &contextsvc.UpdateContextRequest{Content: contextsvc.Ptr(secondDraft)})
	if err != nil {
		return fmt.Errorf("update content: %w", err)
	}
	out.printf("2. Updated   the content: version %d\n", c.Version)
	if err := settle(ctx); err != nil {
		return err
	}

	c, err = client.Contexts.Update(ctx, c.ID, &contextsvc.UpdateContextRequest{
		Name: contextsvc.Ptr("Quickstart runbook (reviewed)"), Tags: []string{"quickstart", "ops", "reviewed"},
	})
	if err != nil {
		return fmt.Errorf("update name and tags: %w", err)
	}
	out.printf("3. Updated   the name and tags: version %d, %q, tags %v\n", c.Version, c.Name, c.Tags)
	if err := settle(ctx); err != nil {
		return err
	}

	var names []string
	for lc, err := range client.Contexts.All(ctx, &contextsvc.ContextListOptions{Tags: []string{"quickstart"}}) {
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		names = append(names, fmt.Sprintf("%s %q v%d", lc.ID, lc.Name, lc.Version))
	}
	out.printf("4. Listed    %d context(s) tagged quickstart: %s\n", len(names), strings.Join(names, ", "))

	out.printf("5. Versions\n")
	for v, err := range client.Contexts.AllVersions(ctx, c.ID, nil) {
		if err != nil {
			return fmt.Errorf("versions: %w", err)
		}
		out.printf("     v%d  %s  sections %v, words %+d\n", v.Version, v.CreatedAt.Format(time.RFC3339),
			v.Changes.SectionsModified, v.Changes.WordCountDelta)
	}

	md, err := exportTo(ctx, client, c.ID, contextsvc.ExportMarkdown, io.Discard)
	if err != nil {
		return err
	}
	out.printf("6. Exported  Markdown: %d bytes (%s)\n", md.size, md.filename)
	if err := settle(ctx); err != nil {
		return err
	}

	if pdfPath == "" {
		pdf, err := exportTo(ctx, client, c.ID, contextsvc.ExportPDF, io.Discard)
		if err != nil {
			return err
		}
		out.printf("7. Exported  PDF: %d bytes (%s; not saved: give -pdf FILE to keep it)\n", pdf.size, pdf.filename)
	} else {
		f, err := os.Create(pdfPath)
		if err != nil {
			return err
		}
		pdf, err := exportTo(ctx, client, c.ID, contextsvc.ExportPDF, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return err
		}
		path, _ := filepath.Abs(f.Name())
		out.printf("7. Exported  PDF: %d bytes, written to %s\n", pdf.size, path)
	}
	if err := settle(ctx); err != nil {
		return err
	}

	if _, err := client.Contexts.Delete(ctx, c.ID); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	_, err = client.Contexts.Get(ctx, c.ID)
	if !errors.Is(err, contextsvc.ErrNotFound) {
		return fmt.Errorf("get after delete: got %v, want a 404", err)
	}
	out.printf("8. Deleted   %s (a Get now answers 404: errors.Is(err, contextsvc.ErrNotFound))\n", c.ID)
	return settle(ctx)
}

type exported struct {
	size     int64
	filename string
}

// exportTo streams an export of the current version into dst.
func exportTo(ctx context.Context, client *contextsvc.Client, id string, format contextsvc.ExportFormat, dst io.Writer) (exported, error) {
	exp, err := client.Contexts.Export(ctx, id, &contextsvc.ExportOptions{Format: format})
	if err != nil {
		return exported{}, fmt.Errorf("export %s: %w", format, err)
	}
	defer exp.Body.Close()
	n, err := io.Copy(dst, exp.Body)
	if err != nil {
		return exported{}, fmt.Errorf("export %s: %w", format, err)
	}
	return exported{size: n, filename: exp.Filename}, nil
}

// receiver collects the events its handler verified, with a one-line
// description of each.
type receiver struct {
	mu     sync.Mutex
	seen   map[string]string // event id -> description
	change chan struct{}     // closed and replaced on every new event
}

func newReceiver() *receiver {
	return &receiver{seen: map[string]string{}, change: make(chan struct{})}
}

// handle is the function NewWebhookHandler calls once per verified event.
func (r *receiver) handle(_ context.Context, ev *contextsvc.Event) error {
	d := describe(ev)
	r.mu.Lock()
	r.seen[ev.ID] = d
	close(r.change)
	r.change = make(chan struct{})
	r.mu.Unlock()
	return nil
}

// waitFor returns once every id in ids was handled, or ctx's error naming
// what is missing.
func (r *receiver) waitFor(ctx context.Context, ids []string) error {
	for {
		r.mu.Lock()
		var missing []string
		for _, id := range ids {
			if _, ok := r.seen[id]; !ok {
				missing = append(missing, id)
			}
		}
		change := r.change
		r.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-change:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d events not delivered in time (%v): %s",
				len(missing), len(ids), ctx.Err(), strings.Join(missing, ", "))
		}
	}
}

// description returns what the handler said of event id.
func (r *receiver) description(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[id]
}

// describe says what an event is about in one line.
func describe(ev *contextsvc.Event) string {
	s := fmt.Sprintf("%-23s %s", ev.Type, ev.ID)
	data, err := ev.ParseData()
	if err != nil {
		return s + " (data unreadable: " + err.Error() + ")"
	}
	switch d := data.(type) {
	case *contextsvc.ContextCreatedData:
		return s + fmt.Sprintf("  %s %q", d.ContextID, d.Name)
	case *contextsvc.ContextUpdatedData:
		return s + fmt.Sprintf("  %s v%d: sections modified %v, words %+d",
			d.ContextID, d.Version, d.Changes.SectionsModified, d.Changes.WordCountDelta)
	case *contextsvc.ContextVersionCreatedData:
		return s + fmt.Sprintf("  %s v%d", d.ContextID, d.Version)
	case *contextsvc.ContextDeletedData:
		return s + fmt.Sprintf("  %s %q", d.ContextID, d.Name)
	case *contextsvc.ExportCompletedData:
		return s + fmt.Sprintf("  %s v%d %s, %d bytes", d.ContextID, d.Version, d.Format, d.SizeBytes)
	}
	return s
}

// printer writes the quickstart's lines; a mutex keeps them whole should
// they ever come from several goroutines.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

// server is an http.Server on a loopback port.
type server struct {
	addr string
	hs   *http.Server
}

// listen serves h on a free loopback port, with time-outs on every read
// and write of a connection, as a server facing the internet needs.
func listen(h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
	}
	go hs.Serve(ln)
	return &server{addr: ln.Addr().String(), hs: hs}, nil
}

// Close stops the server. It is called once everything the quickstart
// waited for has happened, so it does not wait for anything: a graceful
// Shutdown would wait seconds for connections the clients opened but never
// used.
func (s *server) Close() { s.hs.Close() }
