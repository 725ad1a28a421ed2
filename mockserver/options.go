package mockserver

import "log/slog"

// Option configures a [Server] in [New].
type Option func(*config)

type config struct {
	clock     Clock
	keys      []Key
	logger    *slog.Logger
	httpsOnly bool
	admin     bool
}

// WithClock makes the server read all its time (timestamps, rate-limit
// buckets) from c; the default is [RealClock].
func WithClock(c Clock) Option { return func(cf *config) { cf.clock = c } }

// WithKey adds an API key the server accepts. It may be given many times.
// Empty fields get defaults: Plan pro, Scope write, a generated Account and
// User. When no key is given, New creates one (see [Server.DefaultKey]).
func WithKey(k Key) Option { return func(cf *config) { cf.keys = append(cf.keys, k) } }

// WithLogger sets the logger for requests and recovered panics; the
// default discards everything.
func WithLogger(l *slog.Logger) Option { return func(cf *config) { cf.logger = l } }

// WithHTTPSOnlyWebhooks(true) refuses http webhook urls even for loopback
// hosts, as the real service would.
func WithHTTPSOnlyWebhooks(on bool) Option { return func(cf *config) { cf.httpsOnly = on } }

// WithAdmin turns the /_mock/ endpoints on (the default) or off; when off
// they answer 404 like any unknown path.
func WithAdmin(on bool) Option { return func(cf *config) { cf.admin = on } }
