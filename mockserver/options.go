package mockserver

import (
	"log/slog"
	"net/http"
	"slices"
	"time"
)

// Option configures a [Server] in [New].
type Option func(*config)

type config struct {
	clock           Clock
	keys            []Key
	logger          *slog.Logger
	httpsOnly       bool
	admin           bool
	requestLog      bool
	retrySchedule   []time.Duration
	deliveryTimeout time.Duration
	deliveryWorkers int
	deliveryBacklog int
	retryLimit      int
	historyLimit    int
	// deliveryClient sends the delivery attempts; nil is the default
	// client. Only this package's benchmarks set it (an in-memory
	// receiver, to seed 100,000 deliveries without 100,000 connections).
	deliveryClient *http.Client

	readHeaderTimeout time.Duration
	readBodyTimeout   time.Duration
	idleTimeout       time.Duration

	stateFile     string
	stateInterval time.Duration

	adminHosts []string
	adminAuth  *adminAuth
}

// WithClock makes the server read all its time (timestamps, rate-limit
// buckets, the delivery schedule) from c; the default is [RealClock].
// Give a [FakeClock] to run the retry schedule in a test without waiting.
func WithClock(c Clock) Option { return func(cf *config) { cf.clock = c } }

// WithKey adds an API key the server accepts. It may be given many times.
// Empty fields get defaults: Plan pro, Scope write, a generated Account
// ("acct_…"), and the User derived from the Account ([AccountUser]). New
// panics on an invalid key (an Account that [ValidAccount] refuses, say).
// When no key is given, New creates one (see [Server.DefaultKey]).
func WithKey(k Key) Option { return func(cf *config) { cf.keys = append(cf.keys, k) } }

// WithLogger sets the logger for recovered panics, delivery attempts (one
// Info record each) and, with [WithRequestLog], requests; the default
// discards everything.
func WithLogger(l *slog.Logger) Option { return func(cf *config) { cf.logger = l } }

// WithRequestLog(true) logs one Info record per request (method, path,
// status, duration, request id; never a header's value). Without it,
// requests are logged at Debug level only.
func WithRequestLog(on bool) Option { return func(cf *config) { cf.requestLog = on } }

// WithHTTPSOnlyWebhooks(true) refuses http webhook urls even for loopback
// hosts, as the real service would.
func WithHTTPSOnlyWebhooks(on bool) Option { return func(cf *config) { cf.httpsOnly = on } }

// WithAdmin turns the /_mock/ endpoints on (the default) or off; when off
// they answer 404 like any unknown path.
func WithAdmin(on bool) Option { return func(cf *config) { cf.admin = on } }

// WithRetrySchedule sets the delays between the attempts of a webhook
// delivery: after the k-th failed attempt, the next is due the k-th delay
// later, so a delivery gets len(delays)+1 attempts. The default is
// [DefaultRetrySchedule] (1 min, 5 min, 30 min, 2 h, 24 h); an empty,
// non-nil slice means a single attempt. Negative delays count as zero. The
// slice is copied.
func WithRetrySchedule(delays []time.Duration) Option {
	return func(cf *config) {
		cf.retrySchedule = slices.Clone(delays)
		if cf.retrySchedule == nil {
			cf.retrySchedule = DefaultRetrySchedule()
		}
	}
}

// WithDeliveryTimeout bounds each delivery attempt, in real time (the
// network is real even on a fake clock); <= 0 means
// [DefaultDeliveryTimeout] (10 s).
func WithDeliveryTimeout(d time.Duration) Option {
	return func(cf *config) { cf.deliveryTimeout = d }
}

// WithDeliveryWorkers bounds how many delivery attempts run at once; <= 0
// means 8.
func WithDeliveryWorkers(n int) Option { return func(cf *config) { cf.deliveryWorkers = n } }

// WithDeliveryBacklog sets how many webhook deliveries may wait for their
// first attempt before a request that fires an event waits for room (see
// [DefaultDeliveryBacklog], 20,000, the default when n <= 0). Raise it to
// let a burst of events run ahead of slow receivers, at about 1 KB of
// memory a delivery. The wait ends with the request (or the context given
// to [Server.EmitEvent] or [Server.Publish]): a client that gives up frees
// its request at once, and the delivery it would have made is recorded
// failed, with no attempt and the reason, so it can be redelivered by
// hand.
func WithDeliveryBacklog(n int) Option { return func(cf *config) { cf.deliveryBacklog = n } }

// WithRetryLimit sets how many webhook deliveries may wait for a retry at
// once (see [DefaultRetryLimit], 100,000, the default when n <= 0): a
// delivery whose attempt fails while that many wait gets no retry and ends
// failed, saying why, so a failing receiver cannot grow the pending
// deliveries without bound. A waiting retry takes 1 to 3 KB of resident
// memory (its event, its attempts so far, the collector's headroom): the
// soak with a failing receiver levels off at 250 to 350 MB.
func WithRetryLimit(n int) Option { return func(cf *config) { cf.retryLimit = n } }

// WithHistoryLimit sets how many events the server keeps (the oldest are
// dropped first, and also once they hold [MaxEventHistoryBytes]) and how
// many finished (succeeded or failed) webhook
// deliveries it keeps (those that finished first are dropped first); a
// pending delivery is always kept, however many there are. n <= 0 means
// [DefaultHistoryLimit] (10,000). Contexts, their versions and webhooks
// are data, not history: they are kept until deleted or [Server.Reset].
func WithHistoryLimit(n int) Option { return func(cf *config) { cf.historyLimit = n } }

// The default time-outs of the mock server's connections (see
// [WithReadHeaderTimeout], [WithReadBodyTimeout], [WithIdleTimeout]).
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadBodyTimeout   = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// WithReadHeaderTimeout bounds how long a client may take to send a
// request's headers; past it the connection is closed. It applies to the
// http.Server of [Server.HTTPServer] and [NewTestServer] (and the command);
// <= 0 means [DefaultReadHeaderTimeout] (10 s).
func WithReadHeaderTimeout(d time.Duration) Option {
	return func(cf *config) { cf.readHeaderTimeout = d }
}

// WithReadBodyTimeout bounds how long a client may take to send a
// request's body, from when the server starts reading it: a client that
// sends its headers and then stalls gets a 400 and its connection is
// closed, so it holds no goroutine or lock. The Server enforces it itself
// (through http.ResponseController), so it applies under any http.Server;
// <= 0 means [DefaultReadBodyTimeout] (30 s).
func WithReadBodyTimeout(d time.Duration) Option {
	return func(cf *config) { cf.readBodyTimeout = d }
}

// WithIdleTimeout bounds how long a keep-alive connection may wait for its
// next request before it is closed. It applies to the http.Server of
// [Server.HTTPServer] and [NewTestServer] (and the command); <= 0 means
// [DefaultIdleTimeout] (2 min).
func WithIdleTimeout(d time.Duration) Option {
	return func(cf *config) { cf.idleTimeout = d }
}
