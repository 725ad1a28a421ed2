package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// ErrConfig is matched (through errors.Is) by every error [Run] returns
// about its configuration, before anything is sent: a usage error.
var ErrConfig = errors.New("conformance: bad configuration")

// Defaults of the waits.
const (
	// DefaultDeliveryTimeout bounds the wait for a webhook delivery's
	// first attempt.
	DefaultDeliveryTimeout = 30 * time.Second
	// DefaultRetryTimeout bounds the wait for the retry of the delivery
	// attempt the receiver fails, counted from that attempt: the contract
	// retries after 1 minute.
	DefaultRetryTimeout = 3 * time.Minute
	// DefaultRequestTimeout bounds each request of the run.
	DefaultRequestTimeout = time.Minute
)

// Config configures [Run].
type Config struct {
	// BaseURL is the server's base URL, ending in /v1.
	BaseURL string
	// APIKey is a key of the account the run works in. A run that
	// creates (not ReadOnly) needs write scope.
	APIKey string
	// ReadKey, when set, is a key of read scope in the same account: the
	// run checks that its writes are refused (403) and its reads served.
	ReadKey string
	// ReadOnly runs only the checks that create nothing, even on a server
	// that does not follow the contract.
	ReadOnly bool

	// Limiter paces every request of the run, retries of cleanup
	// included, so that it stays within the key's plan: the SDK's
	// contextsvc.NewLocalLimiter for the plan. nil sends unpaced.
	Limiter contextsvc.Limiter
	// PerMinute is the plan's requests per minute, which X-RateLimit-Limit
	// must say; 0 when not known (any positive number passes).
	PerMinute int
	// Unlimited says the key has no rate limit (the mock's "unlimited"
	// plan): its answers carry no X-RateLimit-* headers.
	Unlimited bool
	// Provoke429 sends unpaced requests (reads of a missing context) until
	// the server answers 429, to check that answer; then it waits until
	// the bucket is full again. Off by default: it spends the key's
	// bucket, which other clients of the key share.
	Provoke429 bool

	// Document is the OpenAPI document answers are checked against
	// (mockserver.OpenAPI()).
	Document []byte

	// ReceiverListen is the address the run's webhook receiver listens on
	// ("127.0.0.1:0", ":9090"). Empty: no webhook is registered and the
	// delivery checks are skipped.
	ReceiverListen string
	// ReceiverURL is the URL the server sends deliveries to, reaching the
	// receiver (through a tunnel, say); empty means
	// http://<the listening address>/. The run registers it with a query
	// parameter naming the run.
	ReceiverURL string
	// SkipRetry skips the check of a failed delivery's retry, which waits
	// for the server's retry schedule (1 minute on a real service).
	SkipRetry bool
	// DeliveryTimeout bounds the wait for deliveries to arrive
	// (DefaultDeliveryTimeout when 0).
	DeliveryTimeout time.Duration
	// RetryTimeout bounds the wait for the retry, from the failed attempt
	// (DefaultRetryTimeout when 0).
	RetryTimeout time.Duration

	// HTTPClient sends the requests; nil is a client with
	// DefaultRequestTimeout. Redirects are never followed (a 3xx is an
	// answer to check).
	HTTPClient *http.Client
	// Now is the clock deliveries are timed on (time.Now when nil). A test
	// of a mock server on a fake clock passes the fake clock's Now.
	Now func() time.Time
	// Sleep waits out the rate limit after the 429 check (a timer on the
	// real clock when nil). A test of a mock server on a fake clock
	// advances that clock instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetryWait, when set, is called once the receiver has failed a
	// delivery's first attempt and the run starts waiting for its retry. A
	// test of a mock server on a fake clock advances the clock there.
	OnRetryWait func()
	// Progress, when set, gets one line per check as it ends, and a line
	// before each long wait.
	Progress io.Writer
	// RunID names the run in everything it creates; empty makes a random
	// one. 1 to 20 characters of a-z and 0-9.
	RunID string
}

// withDefaults checks the configuration and fills in the defaults.
func (c Config) withDefaults() (Config, *url.URL, error) {
	bad := func(format string, args ...any) (Config, *url.URL, error) {
		return c, nil, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
	}
	if c.BaseURL == "" {
		return bad("no base URL: set %s or -base-url", contextsvc.EnvBaseURL)
	}
	base, err := url.Parse(strings.TrimSuffix(c.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" || !strings.HasSuffix(base.Path, "/v1") ||
		base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return bad("base URL %q: need an absolute http or https URL ending in /v1, without user, query or fragment", shownURL(c.BaseURL))
	}
	if c.APIKey == "" {
		return bad("no API key: set %s or -api-key", contextsvc.EnvAPIKey)
	}
	for _, k := range []string{c.APIKey, c.ReadKey} {
		if strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return bad("an API key contains spaces or control characters")
		}
	}
	if c.ReadKey != "" && c.ReadKey == c.APIKey {
		return bad("the read-scope key is the same as the API key: give a key of read scope")
	}
	if len(c.Document) == 0 {
		return bad("no OpenAPI document")
	}
	if c.ReceiverURL != "" && c.ReceiverListen == "" {
		return bad("a receiver URL needs a receiver address to listen on (-receiver-listen)")
	}
	if c.ReceiverURL != "" {
		u, err := url.Parse(c.ReceiverURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
			return bad("receiver URL %q: need an absolute http or https URL without a fragment", shownURL(c.ReceiverURL))
		}
	}
	if c.ReadOnly && c.ReceiverListen != "" {
		return bad("a read-only run registers no webhook: leave out the receiver, or -read-only")
	}
	if c.PerMinute < 0 || c.DeliveryTimeout < 0 || c.RetryTimeout < 0 {
		return bad("negative plan rate or time-out")
	}
	if c.Unlimited && c.Limiter != nil {
		return bad("an unlimited key is not paced: give no limiter")
	}
	if c.RunID != "" && (len(c.RunID) > 20 || strings.ContainsFunc(c.RunID, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })) {
		return bad("run id %q: 1 to 20 characters of a-z and 0-9", c.RunID)
	}
	if c.DeliveryTimeout == 0 {
		c.DeliveryTimeout = DefaultDeliveryTimeout
	}
	if c.RetryTimeout == 0 {
		c.RetryTimeout = DefaultRetryTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	var hc http.Client
	if c.HTTPClient != nil {
		hc = *c.HTTPClient
	} else {
		hc.Timeout = DefaultRequestTimeout
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.HTTPClient = &hc
	return c, base, nil
}

// sleep waits d on the real clock, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
