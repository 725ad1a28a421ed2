package mockserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/access"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/statefile"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Option configures a [Server] in [Open] or [New]. An option given a value
// it cannot use makes Open return an error wrapping [ErrInvalidOption]
// (and New panic with it).
type Option func(*config) error

// ErrInvalidOption is wrapped by the error [Open] returns for an option
// given a value it cannot use, or a [Key] it cannot accept.
var ErrInvalidOption = errors.New("mockserver: invalid option")

// invalidOption is the error of an option that refuses its value; what
// says what is wrong, after the option's name.
func invalidOption(what string, args ...any) error {
	return fmt.Errorf("%w: "+what, append([]any{ErrInvalidOption}, args...)...)
}

// positive is an option setting *dst to a positive n.
func positive[T int | time.Duration](name string, n T, dst func(*config) *T) Option {
	return func(cf *config) error {
		if n <= 0 {
			return invalidOption("%s(%v): must be positive", name, n)
		}
		*dst(cf) = n
		return nil
	}
}

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
	// stateHooks watch and hold up the state file's keeper. Only this
	// package's tests set them.
	stateHooks statefile.Hooks

	adminHosts []string
	adminAuth  *access.Auth

	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	propagator     propagation.TextMapPropagator

	// chaos, when set, is the chaos mode from the start (chaos.go).
	chaos *Chaos

	// upstream, when set, makes the server a validating proxy to it.
	upstream          string
	upstreamTransport http.RoundTripper
	// upstreamTimeout and upstreamIdle bound the upstream (proxy.go).
	upstreamTimeout, upstreamIdle time.Duration
}

// WithClock makes the server read all its time (timestamps, rate-limit
// buckets, the delivery schedule) from c; the default is [RealClock].
// Give a [FakeClock] to run the retry schedule in a test without waiting.
// nil is an error.
func WithClock(c Clock) Option {
	return func(cf *config) error {
		if c == nil {
			return invalidOption("WithClock(nil)")
		}
		cf.clock = c
		return nil
	}
}

// WithKey adds an API key the server accepts. It may be given many times.
// Empty fields get defaults: Plan pro, Scope write, a generated Account
// ("acct_…", the key's alone and new at each start: keys share an account
// only by naming it, unlike the command's -key, whose default is
// [DefaultAccount]), and the User derived from the Account alone (so a
// named account has the same user at every start). With [WithStateFile],
// name the Account: the file's accounts are reached only through keys
// that name them. An invalid key (an Account that is not 1 to 64
// characters of A-Z, a-z, 0-9, '_', '.' and '-', say), or a token given
// twice, makes Open return an error wrapping [ErrInvalidOption] that
// names the key by position, never by its token. When no key is given,
// the server creates one (see [Server.DefaultKey]).
func WithKey(k Key) Option {
	return func(cf *config) error {
		cf.keys = append(cf.keys, k)
		return nil
	}
}

// WithLogger sets the logger for recovered panics, delivery attempts (one
// Info record each) and, with [WithRequestLog], requests; the default (and
// nil) discards everything.
func WithLogger(l *slog.Logger) Option {
	return func(cf *config) error {
		cf.logger = l
		return nil
	}
}

// WithRequestLog(true) logs one Info record per request (method, path,
// status, duration, request id; never a header's value). Without it,
// requests are logged at Debug level only.
func WithRequestLog(on bool) Option {
	return func(cf *config) error {
		cf.requestLog = on
		return nil
	}
}

// WithHTTPSOnlyWebhooks(true) refuses http webhook urls even for loopback
// hosts, as the real service would.
func WithHTTPSOnlyWebhooks(on bool) Option {
	return func(cf *config) error {
		cf.httpsOnly = on
		return nil
	}
}

// WithAdmin turns the /_mock/ endpoints on (the default) or off; when off
// they answer 404 like any unknown path.
func WithAdmin(on bool) Option {
	return func(cf *config) error {
		cf.admin = on
		return nil
	}
}

// WithRetrySchedule sets the delays between the attempts of a webhook
// delivery: after the k-th failed attempt, the next is due the k-th delay
// later, so a delivery gets len(delays)+1 attempts. The default is
// [DefaultRetrySchedule] (1 min, 5 min, 30 min, 2 h, 24 h);
// []time.Duration{} means a single attempt. A nil slice, which could mean
// either, is an error, as is a negative delay. The slice is copied.
func WithRetrySchedule(delays []time.Duration) Option {
	return func(cf *config) error {
		if delays == nil {
			return invalidOption("WithRetrySchedule(nil): give []time.Duration{} for a single attempt, or leave the option out for the default schedule")
		}
		for i, d := range delays {
			if d < 0 {
				return invalidOption("WithRetrySchedule: delay #%d (%v) is negative", i+1, d)
			}
		}
		cf.retrySchedule = slices.Clone(delays)
		return nil
	}
}

// WithDeliveryTimeout bounds each delivery attempt, in real time (the
// network is real even on a fake clock); the default is
// [DefaultDeliveryTimeout] (10 s). It must be positive.
func WithDeliveryTimeout(d time.Duration) Option {
	return positive("WithDeliveryTimeout", d, func(cf *config) *time.Duration { return &cf.deliveryTimeout })
}

// WithDeliveryWorkers bounds how many delivery attempts run at once
// (default 8). It must be positive.
func WithDeliveryWorkers(n int) Option {
	return positive("WithDeliveryWorkers", n, func(cf *config) *int { return &cf.deliveryWorkers })
}

// WithDeliveryBacklog sets how many webhook deliveries may wait for their
// first attempt before a request that fires an event waits for room
// (default [DefaultDeliveryBacklog], 20,000; it must be positive). Raise
// it to let a burst of events run ahead of slow receivers, at about 1 KB
// of memory a delivery. The wait ends with the request (or the context
// given to [Server.EmitEvent] or [Server.Publish]): a client that gives up
// frees its request at once, and the delivery it would have made is
// recorded failed, with no attempt and the reason, so it can be
// redelivered by hand.
func WithDeliveryBacklog(n int) Option {
	return positive("WithDeliveryBacklog", n, func(cf *config) *int { return &cf.deliveryBacklog })
}

// WithRetryLimit sets how many webhook deliveries may wait for a retry at
// once (default [DefaultRetryLimit], 100,000; it must be positive): a
// delivery whose attempt fails while that many wait gets no retry and ends
// failed, saying why, so a failing receiver cannot grow the pending
// deliveries without bound. A waiting retry takes 1 to 3 KB of resident
// memory (its event, its attempts so far, the collector's headroom): the
// soak with a failing receiver levels off at 250 to 350 MB.
func WithRetryLimit(n int) Option {
	return positive("WithRetryLimit", n, func(cf *config) *int { return &cf.retryLimit })
}

// WithHistoryLimit sets how many events the server keeps (the oldest are
// dropped first, and also once they hold [MaxEventHistoryBytes]) and how
// many finished (succeeded or failed) webhook
// deliveries it keeps (those that finished first are dropped first); a
// pending delivery is always kept, however many there are. The default is
// [DefaultHistoryLimit] (10,000); it must be positive. Contexts, their
// versions and webhooks are data, not history: they are kept until
// deleted or [Server.Reset].
func WithHistoryLimit(n int) Option {
	return positive("WithHistoryLimit", n, func(cf *config) *int { return &cf.historyLimit })
}

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
// the default is [DefaultReadHeaderTimeout] (10 s). It must be positive.
func WithReadHeaderTimeout(d time.Duration) Option {
	return positive("WithReadHeaderTimeout", d, func(cf *config) *time.Duration { return &cf.readHeaderTimeout })
}

// WithReadBodyTimeout bounds how long a client may take to send a
// request's body, from when the server starts reading it: a client that
// sends its headers and then stalls gets a 400 and its connection is
// closed, so it holds no goroutine or lock. The Server enforces it itself
// (through http.ResponseController), so it applies under any http.Server;
// the default is [DefaultReadBodyTimeout] (30 s). It must be positive.
func WithReadBodyTimeout(d time.Duration) Option {
	return positive("WithReadBodyTimeout", d, func(cf *config) *time.Duration { return &cf.readBodyTimeout })
}

// WithIdleTimeout bounds how long a keep-alive connection may wait for its
// next request before it is closed. It applies to the http.Server of
// [Server.HTTPServer] and [NewTestServer] (and the command); the default
// is [DefaultIdleTimeout] (2 min). It must be positive.
func WithIdleTimeout(d time.Duration) Option {
	return positive("WithIdleTimeout", d, func(cf *config) *time.Duration { return &cf.idleTimeout })
}

// WithTracerProvider traces the server with OpenTelemetry: a server span
// for every request (/v1 and admin; named by method and route template,
// continuing the traceparent the request carries), a producer span for
// every event fired, and a client span for every webhook delivery
// attempt, a child of its event's span, whose traceparent the attempt
// carries to the receiver. So one trace holds a client's call, the mock's
// handling, each delivery attempt (retries included) and the receiver's
// handling. Without it (the default) nothing is traced and nothing is
// spent on it; the global provider is never used unless given. nil is an
// error. docs/observability.md lists the spans and their attributes.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(cf *config) error {
		if tp == nil {
			return invalidOption("WithTracerProvider(nil)")
		}
		cf.tracerProvider = tp
		return nil
	}
}

// WithMeterProvider measures the server with OpenTelemetry:
// http.server.request.duration of every request (by method, route and
// status), http.client.request.duration of every delivery attempt (by
// receiver and status) and contextsvc.mock.events (by event type).
// Without it (the default) nothing is measured. nil is an error.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(cf *config) error {
		if mp == nil {
			return invalidOption("WithMeterProvider(nil)")
		}
		cf.meterProvider = mp
		return nil
	}
}

// WithPropagator sets how the trace context travels: extracted from every
// request, injected into every delivery attempt. The default is W3C Trace
// Context (traceparent, tracestate), which contextsvcotel's client sends
// and its receiver reads; pass otel.GetTextMapPropagator() for the
// application's global one. It matters only with [WithTracerProvider].
// nil is an error.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(cf *config) error {
		if p == nil {
			return invalidOption("WithPropagator(nil)")
		}
		cf.propagator = p
		return nil
	}
}
