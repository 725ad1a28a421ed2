package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redact"
)

// The receiver's bounds: a delivery's body is at most the SDK's
// receivers' default, the app's answer is passed on up to maxAnswer bytes.
const (
	maxDeliveryBody       = contextsvc.DefaultWebhookMaxBodyBytes
	maxAnswer             = 1 << 20
	defaultForwardTimeout = 30 * time.Second
	shutdownTimeout       = 5 * time.Second
)

// hopHeaders are the headers of one connection, never forwarded (RFC
// 9110 section 7.6.1), with Host and Content-Length, which the forwarded
// request and answer set for themselves.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length"}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, f := range src.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			dst.Del(strings.TrimSpace(name))
		}
	}
	for _, h := range hopHeaders {
		dst.Del(h)
	}
}

func newListenCmd(s *streams) *cobra.Command {
	var (
		forwardTo      string
		events         []string
		secret         string
		listenAddr     string
		publicURL      string
		forwardTimeout time.Duration
		asJSON         bool
	)
	cmd := &cobra.Command{
		Use:   "listen --forward-to URL [--event T]... [--secret S] [--listen ADDR] [--public-url URL]",
		Short: "Receive the account's webhook deliveries and forward each to your app, one line per delivery",
		Long: `Register a webhook whose URL reaches a receiver of this command's own
(--listen), and forward every delivery, its body and headers as they came,
to your app (--forward-to). The app's answer goes back to the service as the
delivery's answer, so a failure is retried by the service for real.

It prints the webhook's id and the signing secret your app verifies with
(--secret chooses it), then one line per delivery: time, event type, event
id, attempt, whether the signature verified with the secret, the app's
status and how long it took.

Ctrl-C stops it. On the mock it removes the webhook (through the mock's
admin API); on a deployment, whose /v1 API cannot delete a webhook, it says
how to.

A server that is not on this machine cannot reach --listen: give it
--public-url, the https URL of a tunnel (cloudflared, ngrok…) that
forwards to --listen.`,
		Example: `  contextsvc listen --forward-to http://localhost:3000/webhooks
  contextsvc listen --forward-to http://localhost:3000/webhooks --event context.updated --secret "$WEBHOOK_SECRET"
  contextsvc listen --forward-to http://localhost:3000/webhooks --listen 127.0.0.1:9000 --public-url https://abc.trycloudflare.com/`,
		Args: cobra.NoArgs,
	}
	api := addAPIFlags(cmd, s)
	fs := cmd.Flags()
	fs.StringVar(&forwardTo, "forward-to", "", "your app's webhook `URL`, which gets every delivery (required)")
	fs.StringArrayVar(&events, "event", nil, "an event `type` to receive, repeatable (default all eight types)")
	fs.StringVar(&secret, "secret", "", "the signing `secret` your app verifies with, 1 to 256 characters (default: a new random whsec_… secret, printed)")
	fs.StringVar(&listenAddr, "listen", "127.0.0.1:0", "the receiver's `address` (port 0 picks a free port)")
	fs.StringVar(&publicURL, "public-url", "", "the `URL` the server sends deliveries to, reaching --listen (a tunnel's); needed for a server not on this machine (default http://<the --listen address>/)")
	fs.DurationVar(&forwardTimeout, "forward-timeout", defaultForwardTimeout, "how long your app may take to answer a delivery")
	fs.BoolVar(&asJSON, "json", false, "print the start and each delivery as a JSON object, one a line")
	_ = cmd.MarkFlagRequired("forward-to")
	_ = cmd.RegisterFlagCompletionFunc("event", completeEventTypes)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		target, err := url.Parse(forwardTo)
		if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
			return usagef("--forward-to must be an absolute http or https URL, got %q", redact.URL(forwardTo))
		}
		types, err := eventTypes(events, true)
		if err != nil {
			return err
		}
		generated, err := signingSecret(cmd, &secret)
		if err != nil {
			return err
		}
		if forwardTimeout <= 0 {
			return usagef("--forward-timeout must be positive")
		}
		if publicURL != "" {
			if u, err := url.Parse(publicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usagef("--public-url must be an absolute URL (https://… for a tunnel), got %q", redact.URL(publicURL))
			}
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		if publicURL == "" && !onThisMachine(c.BaseURL()) {
			return usagef("the server at %s is not on this machine, so it cannot reach the receiver at %s: "+
				"give --public-url, the https URL of a tunnel (cloudflared, ngrok…) that forwards to --listen", c.BaseURL(), listenAddr)
		}
		l := &listener{
			s:         s,
			target:    target,
			secret:    secret,
			asJSON:    asJSON,
			color:     paint(s.colorOK(s.outTTY)),
			forwarder: &http.Client{Timeout: forwardTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		}
		return l.run(cmd.Context(), c, listenAddr, publicURL, types, generated)
	})
	return cmd
}

// onThisMachine reports whether a base URL's host is a loopback one.
func onThisMachine(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// listener is listen's receiver: it forwards each delivery to the app
// and prints a line about it.
type listener struct {
	s         *streams
	target    *url.URL
	secret    string
	asJSON    bool
	color     paint
	forwarder *http.Client

	mu sync.Mutex // one line at a time
}

// run listens, registers the webhook, serves until ctx is done, then
// removes the webhook where it can.
func (l *listener) run(ctx context.Context, c *contextsvc.Client, addr, publicURL string, types []contextsvc.EventType, generated bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	hs := &http.Server{
		Handler:           l,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      l.forwarder.Timeout + time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()

	hookURL := publicURL
	if hookURL == "" {
		tcp := ln.Addr().(*net.TCPAddr)
		host := tcp.IP.String()
		if tcp.IP.IsUnspecified() {
			host = "127.0.0.1"
		}
		hookURL = "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"
	}
	admin, kind := probeServer(ctx, c.BaseURL(), l.s.getenv)
	wh, err := c.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{URL: hookURL, Events: types, Secret: l.secret})
	if err != nil {
		return err
	}
	l.started(wh, ln.Addr().String(), hookURL, kind, generated)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	cleanupErr := l.removeWebhook(ctx, admin, kind, wh.ID)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return errors.Join(fmt.Errorf("the receiver stopped: %w", serveErr), cleanupErr)
	}
	return cleanupErr
}

// started prints the start: the webhook, the secret and what Ctrl-C does.
func (l *listener) started(wh *contextsvc.Webhook, addr, hookURL string, kind serverKind, generated bool) {
	var names []string
	for _, t := range wh.Events {
		names = append(names, string(t))
	}
	if l.asJSON {
		l.printJSON(map[string]any{"kind": "ready", "webhookId": wh.ID, "url": redact.URL(hookURL), "listen": addr, "forwardTo": redact.URL(l.target.String()),
			"events": names, "secret": l.secret, "mock": kind != kindDeployment})
		return
	}
	stop := "Ctrl-C removes the webhook and stops."
	if kind == kindDeployment {
		stop = "Ctrl-C stops (the webhook stays registered: the /v1 API cannot delete one)."
	}
	secretNote := ""
	if !generated {
		secretNote = " (--secret)"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.s.out, "Webhook %s registered for %s\n", cell(wh.ID, 80), strings.Join(names, ", "))
	fmt.Fprintf(l.s.out, "Signing secret: %s%s\n", l.secret, secretNote)
	fmt.Fprintf(l.s.out, "Forwarding deliveries from %s (listening on %s) to %s\n", cell(redact.URL(hookURL), 300), addr, cell(redact.URL(l.target.String()), 300))
	fmt.Fprintf(l.s.out, "%s Waiting for deliveries. %s\n", l.color.style(styleBold, "Ready."), stop)
}

// removeWebhook removes the webhook on the mock, or says how to.
func (l *listener) removeWebhook(ctx context.Context, admin *mockAdmin, kind serverKind, id string) error {
	switch kind {
	case kindMock:
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if err := admin.deleteWebhook(cctx, id); err != nil {
			return fmt.Errorf("removing the webhook %s: %w", id, err)
		}
		l.note(fmt.Sprintf("Removed the webhook %s.", id))
	case kindLockedMock:
		l.note(fmt.Sprintf("The webhook %s stays registered: the mock's admin API asks for credentials (set %s and %s), or remove it with: curl -u USER -X DELETE %s",
			id, envAdminUser, envAdminPassword, admin.webhookURL(id)))
	default:
		l.note(fmt.Sprintf("The webhook %s stays registered: the /v1 API cannot delete a webhook. Remove it where the service's webhooks are managed (its dashboard); meanwhile its deliveries fail and are retried.", id))
	}
	return nil
}

// note prints a line about the listener itself (not a delivery).
func (l *listener) note(text string) {
	if l.asJSON {
		l.printJSON(map[string]any{"kind": "note", "message": text})
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.s.out, text)
}

func (l *listener) printJSON(v any) {
	b, _ := json.Marshal(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s.out.Write(append(b, '\n'))
}

// delivery is what listen says of one delivery.
type delivery struct {
	Time       time.Time `json:"time"`
	EventType  string    `json:"eventType"`
	EventID    string    `json:"eventId"`
	DeliveryID string    `json:"deliveryId"`
	Attempt    int       `json:"attempt"`
	Verified   bool      `json:"signatureVerified"`
	Status     int       `json:"status"`
	DurationMS float64   `json:"durationMs"`
	Error      string    `json:"error,omitempty"`
}

// ServeHTTP takes a delivery, forwards it to the app and answers with the
// app's answer.
func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "contextsvc listen takes webhook deliveries (POST) only", http.StatusMethodNotAllowed)
		return
	}
	d := delivery{Time: time.Now(), DeliveryID: r.Header.Get("X-Service-Delivery"), EventType: r.Header.Get("X-Service-Event")}
	d.Attempt, _ = strconv.Atoi(r.Header.Get("X-Service-Delivery-Attempt"))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDeliveryBody))
	if err != nil {
		d.Status = http.StatusBadRequest
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			d.Status = http.StatusRequestEntityTooLarge
		}
		d.Error = "reading the delivery: " + err.Error()
		http.Error(w, d.Error, d.Status)
		l.line(d)
		return
	}
	d.Verified = contextsvc.VerifySignature(body, r.Header.Get(contextsvc.DefaultSignatureHeader), l.secret) == nil
	var env struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &env) == nil {
		d.EventID = env.ID
		if env.Type != "" {
			d.EventType = env.Type
		}
	}

	start := time.Now()
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, l.target.String(), bytes.NewReader(body))
	if err != nil {
		d.Status, d.Error = http.StatusBadGateway, err.Error()
		http.Error(w, d.Error, d.Status)
		l.line(d)
		return
	}
	copyHeaders(req.Header, r.Header)
	resp, err := l.forwarder.Do(req)
	if err != nil {
		d.DurationMS = ms(time.Since(start))
		d.Status = http.StatusBadGateway
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		d.Error = "the app did not answer: " + err.Error()
		http.Error(w, "contextsvc listen: "+d.Error, d.Status)
		l.line(d)
		return
	}
	defer resp.Body.Close()
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, io.LimitReader(resp.Body, maxAnswer))
	d.Status, d.DurationMS = resp.StatusCode, ms(time.Since(start))
	l.line(d)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// line prints a delivery's line.
func (l *listener) line(d delivery) {
	if l.asJSON {
		l.printJSON(struct {
			Kind string `json:"kind"`
			delivery
		}{"delivery", d})
		return
	}
	verified := l.color.style(styleGreen, "signature verified")
	if !d.Verified {
		verified = l.color.style(styleRed, "signature NOT verified")
	}
	status := l.color.style(statusStyle(d.Status), fmt.Sprintf("%d %s", d.Status, http.StatusText(d.Status)))
	eventID := cmp.Or(cell(d.EventID, 80), "-")
	text := fmt.Sprintf("%s  %s  %s  attempt %d  %s  %s  %s", d.Time.Format("2006-01-02 15:04:05"), cmp.Or(cell(d.EventType, 60), "-"),
		eventID, d.Attempt, verified, status, time.Duration(d.DurationMS*float64(time.Millisecond)).Round(100*time.Microsecond))
	if d.Error != "" {
		text += "  (" + cell(d.Error, 300) + ")"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.s.out, text)
}
