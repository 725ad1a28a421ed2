package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// receivers' default, the app's answer is passed on up to maxAnswer bytes,
// at most maxInFlight deliveries are handled at once (past it the sender
// is told to retry), and the event ids of the last maxSeenEvents verified
// deliveries are remembered to tell duplicates.
const (
	maxDeliveryBody       = contextsvc.DefaultWebhookMaxBodyBytes
	maxAnswer             = 1 << 20
	maxInFlight           = 32
	maxSeenEvents         = 10_000
	defaultForwardTimeout = 30 * time.Second
	shutdownTimeout       = 5 * time.Second
	resolveTimeout        = 5 * time.Second
)

// envWebhookSecret holds listen's signing secret, out of the process list.
const envWebhookSecret = "CONTEXTSVC_WEBHOOK_SECRET"

// listenOptions are listen's flags.
type listenOptions struct {
	forwardTo         string
	events            []string
	secret            string
	listenAddr        string
	publicURL         string
	forwardTimeout    time.Duration
	forwardUnverified bool
	printJSON         bool
	asJSON            bool
}

func newListenCmd(s *streams) *cobra.Command {
	var o listenOptions
	cmd := &cobra.Command{
		Use:   "listen [--forward-to URL] [--event T]... [--listen ADDR] [--public-url URL] [--print-json]",
		Short: "Receive the account's webhook deliveries, print a line for each and forward them to your app",
		Long: `Register a webhook whose URL reaches a receiver of this command's own
(--listen), and print a line for every delivery: time, event type, event
id, attempt, whether the signature verified with the secret, the status it
was answered with and how long it took; a delivery of an event already
taken (answered 2xx, or still in hand) is marked duplicate, and a failed
one says when the service tries again.

With --forward-to, each delivery whose signature verifies is forwarded to
your app, its body as it came and the headers a delivery carries
(Content-Type, User-Agent, X-Service-Signature, X-Service-Event,
X-Service-Delivery, X-Service-Delivery-Attempt, traceparent, tracestate);
the app's status and body go back to the service as the delivery's answer,
so a failure is retried by the service for real. Without it, each verified
delivery is answered 200; --print-json prints its body.

A request whose signature does not verify with the secret is answered 401
and not forwarded (--forward-unverified forwards it, with its other
headers but never Authorization, Cookie or Proxy-Authorization). A
browser's cross-site request, a body that is not JSON and a request that
went round back to this receiver are refused whatever the flags. At most
32 deliveries are handled at once: past that the sender is answered 503
with Retry-After, and retries. Duplicates are told among the last 10,000
events.

The secret your app verifies with: --secret, else $CONTEXTSVC_WEBHOOK_SECRET,
else a new one, printed (a secret given is never printed).

Ctrl-C stops it. On the mock it removes the webhook (through the mock's
admin API); on a deployment, whose /v1 API cannot delete a webhook, it says
how to.

A server that is not on this machine cannot reach --listen: give it
--public-url, the https URL of a tunnel (cloudflared, ngrok…) that
forwards to --listen.`,
		Example: `  contextsvc listen --forward-to localhost:3000/webhooks
  CONTEXTSVC_WEBHOOK_SECRET=whsec_local_dev contextsvc listen --forward-to http://localhost:3000/webhooks --event context.updated
  contextsvc listen --print-json
  contextsvc listen --forward-to http://localhost:3000/webhooks --listen 127.0.0.1:9000 --public-url https://abc.trycloudflare.com/`,
		Args: cobra.NoArgs,
	}
	api := addAPIFlags(cmd, s)
	fs := cmd.Flags()
	fs.StringVar(&o.forwardTo, "forward-to", "", "your app's webhook `URL` (http:// is added to localhost:3000/hooks), which gets every verified delivery (default none: print each delivery and answer 200)")
	fs.StringArrayVar(&o.events, "event", nil, "an event `type` to receive, repeatable (default all eight types)")
	fs.StringVar(&o.secret, "secret", "", "the signing `secret` your app verifies with, 1 to 256 characters (default $"+envWebhookSecret+
		", else a new random whsec_… secret, printed; a flag's value shows in the process list, the variable's does not)")
	fs.StringVar(&o.listenAddr, "listen", "127.0.0.1:0", "the receiver's `address` (port 0 picks a free port)")
	fs.StringVar(&o.publicURL, "public-url", "", "the `URL` the server sends deliveries to, reaching --listen (a tunnel's); needed for a server not on this machine (default http://<the --listen address>/)")
	fs.DurationVar(&o.forwardTimeout, "forward-timeout", defaultForwardTimeout, "how long your app may take to answer a delivery")
	fs.BoolVar(&o.forwardUnverified, "forward-unverified", false, "forward requests whose signature does not verify too, with their headers (but never credentials)")
	fs.BoolVar(&o.printJSON, "print-json", false, "print each delivery's body after its line")
	fs.BoolVar(&o.asJSON, "json", false, "print the start and each delivery as a JSON object, one a line")
	_ = cmd.RegisterFlagCompletionFunc("event", completeEventTypes)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		var target *url.URL
		if cmd.Flags().Changed("forward-to") {
			var err error
			if target, err = forwardTarget(o.forwardTo); err != nil {
				return err
			}
		}
		if o.forwardUnverified && target == nil {
			return usagef("--forward-unverified needs --forward-to")
		}
		types, err := eventTypes(o.events, true)
		if err != nil {
			return err
		}
		from, err := listenSecret(cmd, s, &o.secret)
		if err != nil {
			return err
		}
		if o.forwardTimeout <= 0 {
			return usagef("--forward-timeout must be positive")
		}
		if o.publicURL != "" {
			if u, err := url.Parse(o.publicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usagef("--public-url must be an absolute URL (https://… for a tunnel), got %q", redact.URL(o.publicURL))
			}
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		if o.publicURL == "" && !onThisMachine(c.BaseURL()) {
			return usagef("the server at %s is not on this machine, so it cannot reach the receiver at %s: "+
				"give --public-url, the https URL of a tunnel (cloudflared, ngrok…) that forwards to --listen", c.BaseURL(), o.listenAddr)
		}
		l := newListener(s, &o, target, from)
		return l.run(cmd.Context(), c, o.listenAddr, o.publicURL, types)
	})
	return cmd
}

// forwardTarget reads --forward-to: an absolute http or https URL, or
// host:port/path, to which http:// is added (localhost:3000/hooks).
func forwardTarget(raw string) (*url.URL, error) {
	text := raw
	if !strings.Contains(text, "://") {
		text = "http://" + text
	}
	u, err := url.Parse(text)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--forward-to must be an http or https URL, or host:port/path (localhost:3000/webhooks), got %q", redact.URL(raw))
	}
	if u.Hostname() == "" { // :3000/hooks
		u.Host = "localhost" + u.Host
	}
	if u.Port() != "" {
		if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
			return nil, usagef("--forward-to %q: the port must be 1 to 65535", redact.URL(raw))
		}
	}
	return u, nil
}

// secretSource says where listen's secret came from.
type secretSource string

const (
	secretFlag      secretSource = "flag"
	secretEnv       secretSource = "env"
	secretGenerated secretSource = "generated"
)

// listenSecret settles listen's secret: --secret, else the variable, else
// a new one.
func listenSecret(cmd *cobra.Command, s *streams, secret *string) (secretSource, error) {
	if cmd.Flags().Changed("secret") {
		return secretFlag, checkSecret(*secret)
	}
	if v := s.getenv(envWebhookSecret); v != "" {
		if err := checkSecret(v); err != nil {
			return "", usagef("$%s: %s", envWebhookSecret, strings.TrimPrefix(err.Error(), "--secret "))
		}
		*secret = v
		return secretEnv, nil
	}
	if _, err := signingSecret(cmd, secret); err != nil {
		return "", err
	}
	return secretGenerated, nil
}

// onThisMachine reports whether a base URL's host is a loopback one.
func onThisMachine(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	return loopbackHost(u.Hostname())
}

// loopbackHost reports whether a host name or address is this machine's
// loopback: "localhost", or a loopback address. A name under .localhost is
// not taken for it: only some resolvers keep such names on this machine,
// and a DNS server may answer them with any address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// listener is listen's receiver: it prints a line about each delivery,
// forwarding it to the app when there is one.
type listener struct {
	s                 *streams
	target            *url.URL // nil: deliveries are printed, not forwarded
	secret            string
	secretFrom        secretSource
	forwardUnverified bool
	showBody          bool
	asJSON            bool
	color             paint
	forwarder         *http.Client
	forwardTimeout    time.Duration
	// id names this receiver in the Contextsvc-Listen-Via header of what
	// it forwards, so a request that comes round again is refused.
	id       string
	inFlight chan struct{} // a slot per delivery being handled
	seen     *seenEvents

	mu sync.Mutex // one line at a time
}

func newListener(s *streams, o *listenOptions, target *url.URL, from secretSource) *listener {
	return &listener{
		s:                 s,
		target:            target,
		secret:            o.secret,
		secretFrom:        from,
		forwardUnverified: o.forwardUnverified,
		showBody:          o.printJSON,
		asJSON:            o.asJSON,
		color:             paint(s.colorOK(s.outTTY)),
		forwarder:         &http.Client{Timeout: o.forwardTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		forwardTimeout:    o.forwardTimeout,
		id:                randomID("lsn_"),
		inFlight:          make(chan struct{}, maxInFlight),
		seen:              newSeenEvents(maxSeenEvents),
	}
}

// run listens, registers the webhook, serves until ctx is done, then
// removes the webhook where it can.
func (l *listener) run(ctx context.Context, c *contextsvc.Client, addr, publicURL string, types []contextsvc.EventType) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	if l.target != nil {
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		self := forwardsToItself(rctx, l.target, ln.Addr(), net.DefaultResolver.LookupNetIP, localAddrs)
		cancel()
		if self {
			ln.Close()
			return usagef("--forward-to %s is this receiver itself (listening on %s): each delivery would be forwarded to itself without end; give your app's URL",
				redact.URL(l.target.String()), ln.Addr())
		}
	}
	l.warn(ln.Addr())
	hs := &http.Server{
		Handler:           l,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      l.forwardTimeout + time.Minute,
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
	admin, kind := probe(ctx, l.s.mockAdmin(c.BaseURL()))
	wh, err := c.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{URL: hookURL, Events: types, Secret: l.secret})
	if err != nil {
		return err
	}
	l.started(wh, ln.Addr().String(), hookURL, kind)

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

// warn says on stderr, once, what exposes the deliveries beyond this
// machine: a receiver listening beyond loopback, or an app reached over
// plain http on another host.
func (l *listener) warn(addr net.Addr) {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(tcp.IP); ok && !ip.Unmap().IsLoopback() {
			what := "it forwards only deliveries signed with the secret"
			if l.target == nil {
				what = "it answers only deliveries signed with the secret"
			} else if l.forwardUnverified {
				what = "with --forward-unverified it forwards whatever it is sent to your app"
			}
			fmt.Fprintf(l.s.err, "Warning: the receiver listens on %s, which other machines can reach: %s; --listen 127.0.0.1:PORT keeps it on this machine.\n", addr, what)
		}
	}
	if l.target != nil && l.target.Scheme == "http" && !loopbackHost(l.target.Hostname()) {
		fmt.Fprintf(l.s.err, "Warning: --forward-to %s is plain http to another machine: each delivery and its signature cross the network unencrypted; use https.\n",
			cell(redact.URL(l.target.String()), 300))
	}
}

// started prints the start: the webhook, the secret (only one made up
// here) and what Ctrl-C does.
func (l *listener) started(wh *contextsvc.Webhook, addr, hookURL string, kind serverKind) {
	var names []string
	for _, t := range wh.Events {
		names = append(names, string(t))
	}
	if l.asJSON {
		ready := map[string]any{"kind": "ready", "webhookId": wh.ID, "url": redact.URL(hookURL), "listen": addr,
			"events": names, "secretFrom": l.secretFrom, "mock": kind != kindDeployment, "forwardUnverified": l.forwardUnverified}
		if l.target != nil {
			ready["forwardTo"] = redact.URL(l.target.String())
		}
		if l.secretFrom == secretGenerated {
			ready["secret"] = l.secret
		}
		l.printJSON(ready)
		return
	}
	stop := "Ctrl-C removes the webhook and stops."
	if kind == kindDeployment {
		stop = "Ctrl-C stops (the webhook stays registered: the /v1 API cannot delete one)."
	}
	var secret string
	switch l.secretFrom {
	case secretGenerated:
		secret = l.secret + " (made up for this listen: give it to your app)"
	case secretEnv:
		secret = "from $" + envWebhookSecret
	default:
		secret = "from --secret"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.s.out, "Webhook %s registered for %s\n", cell(wh.ID, 80), strings.Join(names, ", "))
	fmt.Fprintf(l.s.out, "Signing secret: %s\n", secret)
	if l.target != nil {
		unverified := ""
		if l.forwardUnverified {
			unverified = " (unverified ones too: --forward-unverified)"
		}
		fmt.Fprintf(l.s.out, "Forwarding deliveries from %s (listening on %s) to %s%s\n", cell(redact.URL(hookURL), 300), addr, cell(redact.URL(l.target.String()), 300), unverified)
	} else {
		fmt.Fprintf(l.s.out, "Printing deliveries from %s (listening on %s), each verified one answered 200 (--forward-to sends them to your app)\n", cell(redact.URL(hookURL), 300), addr)
	}
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
	fmt.Fprintln(l.s.out, safeText(text)) // it can hold a server's ids
}

func (l *listener) printJSON(v any) {
	b, _ := json.Marshal(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s.out.Write(append(b, '\n'))
}
