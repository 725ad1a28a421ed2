package mockcmd

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/cliflags"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
	"golang.org/x/crypto/bcrypt"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // could not load the state file, listen, serve or write the state file
	exitUsage = 2 // bad flags
)

// settings are the parsed flags.
type settings struct {
	addr            string
	keys            []mockserver.Key
	schedule        []time.Duration
	fakeClock       bool
	deliveryTimeout time.Duration
	httpsOnly       bool
	admin           bool
	logLevel        slog.Level
	shutdownTimeout time.Duration
	historyLimit    int
	deliveryBacklog int
	retryLimit      int
	headerTimeout   time.Duration
	bodyTimeout     time.Duration
	idleTimeout     time.Duration
	stateFile       string
	stateInterval   time.Duration
	adminHosts      []string
	adminAuthFile   string
	adminAuth       mockserver.Option // from adminAuthFile; nil without it
	adminInsecure   bool
	hashUser        string // -hash-password: print a line for this user and exit
	otel            bool   // -otel
	otelSet         bool   // -otel was given (either way): the environment does not decide
	upstream        string // -upstream: a validating proxy to this base URL
	upstreamTimeout time.Duration
	upstreamIdle    time.Duration
	chaos           *mockserver.Chaos // -chaos; nil without it (or with an empty SPEC)
}

// keyFlags collects the repeatable -key flag. The specs are parsed after
// the flag set, not in Set: the flag package quotes a refused value in its
// error message, and the value holds the key's token.
type keyFlags []string

// String and Set make keyFlags a flag.Value; Set keeps one KEY[:plan[:scope]].
func (k *keyFlags) String() string { return fmt.Sprintf("%d keys", len(*k)) }

func (k *keyFlags) Set(spec string) error {
	*k = append(*k, spec)
	return nil
}

// parse turns the specs into keys. Its errors name the flag by position and
// never quote a token.
func (k keyFlags) parse() ([]mockserver.Key, error) {
	keys := make([]mockserver.Key, 0, len(k))
	seen := make(map[string]int, len(k))
	for i, spec := range k {
		key, err := mockserver.ParseKey(spec)
		if err != nil {
			return nil, fmt.Errorf("-key #%d: %s", i+1, strings.TrimPrefix(err.Error(), "mockserver: "))
		}
		if first, ok := seen[key.Token]; ok {
			return nil, fmt.Errorf("-key #%d: the same key is given twice (as -key #%d too): each key is given once, with its plan, scope and account", i+1, first)
		}
		seen[key.Token] = i + 1
		keys = append(keys, key)
	}
	return keys, nil
}

// hostFlags collects the repeatable -admin-host flag.
type hostFlags []string

// String and Set make hostFlags a flag.Value; Set keeps one name if
// mockrules.AdminHost takes it.
func (h *hostFlags) String() string { return strings.Join(*h, ",") }

func (h *hostFlags) Set(name string) error {
	if err := mockrules.AdminHost(name); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "mockserver: "))
	}
	*h = append(*h, name)
	return nil
}

// scheduleFlag is the -retry-schedule flag: comma-separated durations.
type scheduleFlag struct{ delays []time.Duration }

// String and Set make scheduleFlag a flag.Value; an empty value means no retries.
func (s *scheduleFlag) String() string {
	parts := make([]string, len(s.delays))
	for i, d := range s.delays {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

func (s *scheduleFlag) Set(v string) error {
	s.delays = []time.Duration{}
	if strings.TrimSpace(v) == "" {
		return nil // one attempt, no retries
	}
	for _, p := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 30s or 2m", strings.TrimSpace(p))
		}
		if d < 0 {
			return fmt.Errorf("delay %s is negative", d)
		}
		s.delays = append(s.delays, d)
	}
	return nil
}

// chaosFlag is the -chaos flag: a SPEC, read by mockserver.ParseChaos.
type chaosFlag struct{ c *mockserver.Chaos }

// String and Set make chaosFlag a flag.Value; an empty SPEC is no chaos.
func (f *chaosFlag) String() string {
	if f.c == nil {
		return ""
	}
	return f.c.String()
}

func (f *chaosFlag) Set(spec string) error {
	c, err := mockserver.ParseChaos(spec)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "mockserver: chaos: "))
	}
	f.c = nil
	if strings.TrimSpace(spec) != "" {
		f.c = &c
	}
	return nil
}

// levelFlag is the -log-level flag.
type levelFlag struct{ level slog.Level }

// String and Set make levelFlag a flag.Value.
func (l *levelFlag) String() string { return strings.ToLower(l.level.String()) }

func (l *levelFlag) Set(v string) error {
	switch strings.ToLower(v) {
	case "debug":
		l.level = slog.LevelDebug
	case "info":
		l.level = slog.LevelInfo
	case "warn", "warning":
		l.level = slog.LevelWarn
	case "error":
		l.level = slog.LevelError
	default:
		return errors.New("must be debug, info, warn or error")
	}
	return nil
}

// parseFlags parses the command line of contextsvc-mock; -h writes the
// help to stdout. Errors are returned for the caller to report.
func parseFlags(args []string, stdout io.Writer) (*settings, error) {
	return parseFlagsAs("contextsvc-mock", args, stdout)
}

// parseFlagsAs is parseFlags for the command called name.
func parseFlagsAs(name string, args []string, stdout io.Writer) (*settings, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var (
		st       = settings{admin: true}
		keys     keyFlags
		hosts    hostFlags
		schedule = scheduleFlag{delays: mockserver.DefaultRetrySchedule()}
		level    = levelFlag{level: slog.LevelInfo}
		chaos    chaosFlag
	)
	fs.StringVar(&st.addr, "addr", "127.0.0.1:8080", "`address` to listen on (port 0 picks a free port; the actual address is printed). Beyond loopback (0.0.0.0, :PORT, a LAN address) the admin routes need --admin-auth-file, --admin-insecure or --admin=false")
	fs.Var(&keys, "key", "an API key as `KEY[:plan[:scope[:account]]]`, repeatable; plan free, pro (default), business, unlimited or enterprise=PERMINUTE/BURST; scope write (default) or read; account 1 to 64 characters of A-Z a-z 0-9 _ . - (default \""+mockserver.DefaultAccount+"\"). Keys naming one account share its contexts and webhooks, and are one user (user_… derived from the account name); another account's contexts are 404s. Without --key a random key is made (plan business, account \""+mockserver.DefaultAccount+"\"). The first key is printed.")
	fs.Var(&schedule, "retry-schedule", "comma-separated `delays` between webhook delivery attempts, e.g. 1s,5s,30s,2m,24m; empty for a single attempt")
	fs.BoolVar(&st.fakeClock, "fake-clock", false, "run on a fake clock that moves only by POST /_mock/clock/advance (timestamps, retries and rate-limit refills all follow it); "+
		"it starts at the real time, or, with a --state-file saved on a fake clock, where that clock stood")
	fs.DurationVar(&st.deliveryTimeout, "delivery-timeout", mockserver.DefaultDeliveryTimeout, "time-out of each webhook delivery attempt")
	fs.BoolVar(&st.httpsOnly, "https-only", false, "refuse http webhook URLs even for loopback hosts")
	fs.BoolVar(&st.admin, "admin", true, "serve the /_mock/ admin endpoints")
	fs.Var(&hosts, "admin-host", "a host `name` the admin routes and the dashboard answer to besides IP addresses, localhost and *.localhost, repeatable: "+
		"the name you reach the mock by (a Docker Compose service, a machine on your network); .example.com allows it and every name under it. "+
		"Requests with any other Host get a 403, so that a web page on another site cannot point its own name at the mock (DNS rebinding)")
	fs.StringVar(&st.adminAuthFile, "admin-auth-file", "", "ask for a user name and password on the admin routes and the dashboard (HTTP Basic: a browser prompts for them, curl takes -u USER), "+
		"checked against this htpasswd `file` of user:bcrypt-hash lines (--hash-password USER or htpasswd -nbBC 10 USER PASSWORD writes one; cost 4 to 14). Needed to listen beyond loopback with the admin routes on")
	fs.BoolVar(&st.adminInsecure, "admin-insecure", false, "let the admin routes and the dashboard listen beyond loopback (--addr 0.0.0.0:PORT, a LAN address) without --admin-auth-file: "+
		"anyone who reaches the port can read every account's contexts and webhook secrets, redeliver and reset the mock. Without it such a start is refused")
	fs.StringVar(&st.hashUser, "hash-password", "", "print an --admin-auth-file line for `user` (user:bcrypt-hash, cost 10), its password read from the first line of stdin, and exit: "+
		"echo 'a long passphrase' | contextsvc-mock --hash-password admin >> admin.htpasswd")
	fs.Var(&level, "log-level", "`level` of the log on stderr: debug, info (default: every request and delivery attempt), warn or error")
	fs.DurationVar(&st.shutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGINT or SIGTERM, how long running requests and webhook deliveries may take to finish")
	fs.IntVar(&st.historyLimit, "history-limit", mockserver.DefaultHistoryLimit, "how many events, and how many finished webhook deliveries, are kept (the oldest go first; pending deliveries are always kept); events are also kept to 64 MiB, data included")
	fs.IntVar(&st.deliveryBacklog, "delivery-backlog", mockserver.DefaultDeliveryBacklog, "how many webhook deliveries may wait for their first attempt; past it, requests that fire events wait for room (about 1 KB of memory a delivery)")
	fs.IntVar(&st.retryLimit, "retry-limit", mockserver.DefaultRetryLimit, "how many webhook deliveries may wait for a retry; past it, a failed attempt gets no retry and its delivery ends failed (1 to 3 KB of memory a waiting retry)")
	fs.DurationVar(&st.headerTimeout, "read-header-timeout", mockserver.DefaultReadHeaderTimeout, "how long a client may take to send a request's headers before its connection is closed")
	fs.DurationVar(&st.bodyTimeout, "read-body-timeout", mockserver.DefaultReadBodyTimeout, "how long a client may take to send a request's body before it gets a 400 and its connection is closed")
	fs.DurationVar(&st.idleTimeout, "idle-timeout", mockserver.DefaultIdleTimeout, "how long a keep-alive connection may wait for its next request before it is closed")
	fs.StringVar(&st.stateFile, "state-file", "", "keep the contexts (with every version), webhooks (with their secrets) and pending deliveries in this `file`, so they survive a restart: "+
		"loaded at start (a missing file is a first start; one that cannot be read or is not a state document stops the start, and is left as it is), "+
		"written --state-interval after they change and at shutdown, atomically, mode 0600; one mock per file (a second one on the same file, by any name or symbolic link, stops, saying it is in use; "+
		"a link is followed, and stays a link). The time never goes back across a restart: --fake-clock resumes where the file's clock stood, "+
		"and a file saved on a fake clock ahead of the real time is refused without --fake-clock. The event log and finished deliveries are not kept")
	fs.DurationVar(&st.stateInterval, "state-interval", mockserver.DefaultStateInterval, "with --state-file, how long after a change the file is written (the changes of that time together)")
	fs.BoolVar(&st.otel, "otel", false, "trace and measure with OpenTelemetry, exported over OTLP/HTTP to $"+envEndpoint+" (default "+defaultEndpoint+"; "+
		"$"+envTracesEndpoint+" and $"+envMetricsEndpoint+" per signal), as service $"+envServiceName+" (default "+defaultServiceName+"): "+
		"a span for every request, event and webhook delivery attempt (each attempt sends its traceparent), and their metrics. "+
		"On by itself when one of those endpoints is set; --otel=false keeps it off")
	fs.StringVar(&st.upstream, "upstream", "", "run as a validating proxy: forward every /v1 request to this base `URL` (ending in /v1, as CONTEXTSVC_BASE_URL: your staging or production deployment) "+
		"with its headers as they are, the caller's Authorization included, and hold each request and answer to the contract's OpenAPI document (GET /_mock/openapi.yaml). "+
		"Each mismatch is logged (warn) with the rule of the document it breaks, listed at GET /_mock/contract/mismatches and in the dashboard's Contract view with counts per operation "+
		"and whether the SDK tolerates it; API keys, webhook secrets and receiver URLs' tokens are never logged or shown. "+
		"Bodies over 8 MiB stream through unvalidated; an upstream that does not answer is a 502, one that does not begin its answer within --upstream-timeout a 504. The proxy needs no key of its own: --key and --state-file do not go with it")
	fs.DurationVar(&st.upstreamTimeout, "upstream-timeout", mockserver.DefaultUpstreamTimeout, "with --upstream, how long the upstream has to begin its answer (its headers and the first bytes of its body) once a request is forwarded; "+
		"past it the caller gets a 504 with the contract's error body, and a finding and a warning say so")
	fs.DurationVar(&st.upstreamIdle, "upstream-idle-timeout", mockserver.DefaultUpstreamIdleTimeout, "with --upstream, how long the upstream's answer body may pause once it has begun; "+
		"past it the answer is cut short (the caller sees it end early), and a finding and a warning say so")
	fs.Var(&chaos, "chaos", "play the service's failures, reproducibly: `SPEC` is comma-separated KEY=VALUE among seed=N (the source of every decision, 1 to 2^53-1; "+
		"without it one is chosen and logged, so that a run can be replayed), duplicate=P (a delivery attempt the receiver acknowledged is sent again: "+
		"the same event id and body, a new attempt), reorder=P (a delivery is held back up to the delay, so that a later event of the same context overtakes it), "+
		"delay=D (the longest hold, and wait before a duplicate, whole milliseconds: default 2s, at most 5m, written as 500ms, 1.5s, 5m or 1m30s) and api-error=P (a /v1 request fails, instead of running, "+
		"with 429, 500, 502 or 503 and the contract's error body), P a probability from 0 to 1 (0.2, .5, 1 or 1e-05); e.g. seed=42,duplicate=0.2,reorder=0.3,api-error=0.1. "+
		"The same seed and the same requests, sent one after another, give the same decisions; each shows on its delivery's attempts, at GET /_mock/chaos "+
		"(PUT changes it, DELETE stops it), on the dashboard and in the log at debug level. A receiver must then handle each event once, in any order "+
		"(contextsvc.NewWebhookHandler deduplicates by event id): docs/mockserver.md, \"Chaos\", has a test of one")
	header := "Usage: " + name + " [flags]\n\nServes the in-memory Context Management Service and prints its base URL and an API key;\n" +
		"with --upstream URL, a validating proxy to a deployment instead (it prints its base URL alone).\n\nFlags:\n"
	if err := cliflags.Parse(fs, args, stdout, header); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { st.otelSet = st.otelSet || f.Name == "otel" })
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags only)", fs.Arg(0))
	}
	if st.deliveryTimeout <= 0 || st.shutdownTimeout <= 0 || st.headerTimeout <= 0 || st.bodyTimeout <= 0 || st.idleTimeout <= 0 || st.stateInterval <= 0 {
		err := errors.New("-delivery-timeout, -shutdown-timeout, -read-header-timeout, -read-body-timeout, -idle-timeout and -state-interval must be positive")
		return nil, err
	}
	if st.upstreamTimeout <= 0 || st.upstreamIdle <= 0 {
		err := errors.New("-upstream-timeout and -upstream-idle-timeout must be positive")
		return nil, err
	}
	if st.historyLimit <= 0 || st.deliveryBacklog <= 0 || st.retryLimit <= 0 {
		err := errors.New("-history-limit, -delivery-backlog and -retry-limit must be positive")
		return nil, err
	}
	if st.upstream != "" && chaos.c != nil {
		err := errors.New("-upstream forwards every /v1 request to a deployment and makes no delivery: -chaos plays the in-memory service, so it does not go with it")
		return nil, err
	}
	if st.upstream != "" && (len(keys) > 0 || st.stateFile != "") {
		err := errors.New("-upstream forwards every /v1 request with the caller's own Authorization, and keeps no state: -key and -state-file do not go with it")
		return nil, err
	}
	parsed, err := keys.parse()
	if err != nil {
		return nil, err
	}
	if len(parsed) == 0 {
		// A random token, but the account every run without -key shares,
		// so the data of one run (a state file) is the next run's too.
		parsed = []mockserver.Key{{Token: "sk_test_" + strings.ToLower(rand.Text()), Plan: mockserver.PlanBusiness,
			Scope: mockserver.ScopeWrite, Account: mockserver.DefaultAccount}}
	}
	st.keys, st.schedule, st.logLevel, st.adminHosts, st.chaos = parsed, schedule.delays, level.level, hosts, chaos.c
	if st.adminAuthFile != "" {
		if st.adminAuth, err = readAdminAuth(st.adminAuthFile); err != nil {
			return nil, err
		}
	}
	if st.admin && st.adminAuth == nil && !st.adminInsecure && beyondLoopback(st.addr) {
		err := fmt.Errorf("-addr %s listens beyond this machine, and the admin routes (/_mock/) and the dashboard would have no credentials: "+
			"anyone who reaches the port could read every account's contexts and webhook secrets and reset the mock. "+
			"Add -admin-auth-file FILE (lines of user:bcrypt-hash, as -hash-password USER writes them), "+
			"or -admin=false to turn the admin routes off, or -admin-insecure if anyone who reaches the port may use them", st.addr)
		return nil, err
	}
	return &st, nil
}

// readAdminAuth reads the -admin-auth-file. What it holds is checked by
// mockserver.Open (see badAdminAuth).
func readAdminAuth(path string) (mockserver.Option, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-admin-auth-file: %w", err)
	}
	defer f.Close()
	return mockserver.WithAdminAuth(f), nil
}

// badAdminAuth is the usage error of an -admin-auth-file that Open
// refused (its options' one refusal the flags cannot check first), naming
// the file and the line; "" for any other error.
func badAdminAuth(st *settings, err error) string {
	return badOption(err, "WithAdminAuth: ", "-admin-auth-file "+st.adminAuthFile+": ")
}

// badOption is the usage error of an option Open refused whose message
// starts with prefix, as the flag (flagPrefix) names it; "" for any other
// error.
func badOption(err error, prefix, flagPrefix string) string {
	if !errors.Is(err, mockserver.ErrInvalidOption) {
		return ""
	}
	msg := strings.TrimPrefix(err.Error(), mockserver.ErrInvalidOption.Error()+": ")
	if !strings.HasPrefix(msg, prefix) {
		return ""
	}
	return flagPrefix + strings.TrimPrefix(msg, prefix)
}

// adminHashCost is the bcrypt cost of -hash-password: about 60 ms a check
// on a laptop, once per password (the mock remembers a verified one).
const adminHashCost = 10

// hashPasswordLine makes the -admin-auth-file line for user, the password
// the first line of r, checked as the file will be.
func hashPasswordLine(user string, r io.Reader) (string, error) {
	if err := mockrules.AdminUser(user); err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), "mockserver: "))
	}
	pass, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password from stdin: %w", err)
	}
	pass = strings.TrimRight(pass, "\r\n")
	if pass == "" {
		return "", errors.New("give the password on stdin (one line): echo 'a long passphrase' | contextsvc-mock -hash-password USER")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(pass), adminHashCost)
	if err != nil {
		return "", fmt.Errorf("the password: %w", err)
	}
	return user + ":" + string(hash), nil
}

// beyondLoopback reports whether addr, an -addr, listens where other
// machines can reach it: all interfaces (":8080", 0.0.0.0, ::), an
// address that is not loopback, or a name that resolves to one. An
// address that cannot be split or resolved is left to Listen to refuse.
func beyondLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "" {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return !ip.IsLoopback()
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ips, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
	if err != nil {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return true
		}
	}
	return false
}

// options turns the settings into the server's options.
func (st *settings) options(logger *slog.Logger) []mockserver.Option {
	opts := []mockserver.Option{
		mockserver.WithLogger(logger),
		mockserver.WithRequestLog(true),
		mockserver.WithRetrySchedule(st.schedule),
		mockserver.WithDeliveryTimeout(st.deliveryTimeout),
		mockserver.WithHTTPSOnlyWebhooks(st.httpsOnly),
		mockserver.WithAdmin(st.admin),
		mockserver.WithHistoryLimit(st.historyLimit),
		mockserver.WithDeliveryBacklog(st.deliveryBacklog),
		mockserver.WithRetryLimit(st.retryLimit),
		mockserver.WithReadHeaderTimeout(st.headerTimeout),
		mockserver.WithReadBodyTimeout(st.bodyTimeout),
		mockserver.WithIdleTimeout(st.idleTimeout),
		mockserver.WithAdminHosts(st.adminHosts...),
	}
	if st.fakeClock {
		opts = append(opts, mockserver.WithClock(mockserver.NewFakeClock(time.Now())))
	}
	for _, k := range st.keys {
		opts = append(opts, mockserver.WithKey(k))
	}
	if st.stateFile != "" {
		opts = append(opts, mockserver.WithStateFile(st.stateFile), mockserver.WithStateInterval(st.stateInterval))
	}
	if st.adminAuth != nil {
		opts = append(opts, st.adminAuth)
	}
	if st.upstream != "" {
		opts = append(opts, mockserver.WithUpstream(st.upstream), mockserver.WithUpstreamTimeout(st.upstreamTimeout),
			mockserver.WithUpstreamIdleTimeout(st.upstreamIdle))
	}
	if st.chaos != nil {
		opts = append(opts, mockserver.WithChaos(*st.chaos))
	}
	return opts
}

// shellWord quotes a value for a POSIX shell when it holds anything but
// the characters a word may hold unquoted.
func shellWord(v string) string {
	if v != "" && !strings.ContainsFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// stateFileText is the start line's word on the state file.
func stateFileText(st *settings) string {
	if st.stateFile == "" {
		return "none (nothing survives a restart; -state-file keeps it)"
	}
	return st.stateFile + " (written every " + st.stateInterval.String() + " while it changes, and at shutdown)"
}

// accountNames lists the accounts of keys, each once, in the order of
// their first key (names only: a token is never logged).
func accountNames(keys []mockserver.Key) string {
	var names []string
	for _, k := range keys {
		if !slices.Contains(names, k.Account) {
			names = append(names, k.Account)
		}
	}
	return strings.Join(names, ",")
}

// warnAdminExposed says so when the server listens on an address other
// machines can reach (0.0.0.0, ::, or an interface's address) with the
// admin routes on: with credentials (protected), that they ask for them;
// without (-admin-insecure), a warning that whoever reaches the port can
// read every account's contexts and webhook secrets, redeliver, move the
// clock and reset the mock, and the dashboard shows all of it.
func warnAdminExposed(logger *slog.Logger, addr net.Addr, protected bool) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsLoopback() {
		return
	}
	const byName = "(They answer to requests addressed to an IP address or localhost; one that reaches the mock by another name needs -admin-host NAME.)"
	if protected {
		logger.Info("the admin routes (/_mock/) and the dashboard are reachable beyond this machine, and ask for the credentials of -admin-auth-file. "+byName,
			"addr", addr.String())
		return
	}
	logger.Warn("the admin routes (/_mock/) and the dashboard are reachable beyond this machine and have no credentials (-admin-insecure): "+
		"anyone who reaches this address can read every account's contexts and webhook secrets, redeliver, move the clock and reset the mock. "+
		"Give them credentials with -admin-auth-file FILE, listen on a loopback address (-addr 127.0.0.1:PORT), or turn them off with -admin=false. "+byName,
		"addr", addr.String())
}

// baseURL is the URL a user can paste to reach the server listening on
// addr, and whether it listens on every interface: there a URL of the
// unspecified address (http://[::]:8080) reaches nothing, so it is
// 127.0.0.1 (the listener takes IPv4 and IPv6 alike).
func baseURL(addr net.Addr) (url string, everyInterface bool) {
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port)), true
	}
	return "http://" + addr.String(), false
}

// Run is the whole command: it serves until ctx is done, then shuts down
// and returns the exit code. With -hash-password it reads the password
// from the process's stdin.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunAs(ctx, "contextsvc-mock", args, stdout, stderr)
}

// RunAs is Run for the command called name (contextsvc mock), which its
// help and usage errors name.
func RunAs(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	return runMain(ctx, name, args, os.Getenv, os.Stdin, stdout, stderr)
}

// runInput is run with stdin given.
func runInput(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runEnv(ctx, args, os.Getenv, stdin, stdout, stderr)
}

// runEnv is runInput with the environment's variables read by getenv.
func runEnv(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runMain(ctx, "contextsvc-mock", args, getenv, stdin, stdout, stderr)
}

// runMain is the command called name.
func runMain(ctx context.Context, name string, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	st, err := parseFlagsAs(name, args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		cliflags.Report(stderr, name, err)
		return exitUsage
	}
	if st.hashUser != "" {
		line, err := hashPasswordLine(st.hashUser, stdin)
		if err != nil {
			cliflags.Report(stderr, name, fmt.Errorf("-hash-password: %w", err))
			return exitUsage
		}
		fmt.Fprintln(stdout, line)
		return exitOK
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: st.logLevel}))
	opts := st.options(logger)
	if otelWanted(st, getenv) {
		otelOpts, stopOtel, err := startOtel(ctx, getenv, logger)
		if err != nil {
			cliflags.Report(stderr, name, err)
			return exitUsage
		}
		opts = append(opts, otelOpts...)
		// Last, once the deliveries have stopped: their spans are sent too.
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), st.shutdownTimeout)
			defer cancel()
			if err := stopOtel(sctx); err != nil {
				logger.Warn("OpenTelemetry: not every span and metric could be exported", "error", err)
			}
		}()
	}
	srv, err := mockserver.Open(opts...)
	if msg := badOption(err, "WithUpstream: ", "-upstream: "); msg != "" {
		cliflags.Report(stderr, name, errors.New(msg))
		return exitUsage
	}
	if msg := badAdminAuth(st, err); msg != "" {
		cliflags.Report(stderr, name, errors.New(msg))
		return exitUsage
	}
	if err != nil {
		// The error names the file and what is wrong with it; the file is
		// left as it is.
		logger.Error("cannot start: the state file cannot be loaded", "error", err)
		return exitError
	}

	ln, err := net.Listen("tcp", st.addr)
	if err != nil {
		logger.Error("cannot listen", "addr", st.addr, "error", err)
		_ = srv.Close(ctx) // lets the state file go, unchanged
		return exitError
	}
	base, everyInterface := baseURL(ln.Addr())
	// The server's own http.Server: its header and idle time-outs come
	// from the flags (the body time-out is enforced by the handler).
	hs := srv.HTTPServer(st.addr)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	if st.upstream != "" {
		// A proxy has no key: its callers use the upstream's. The lines
		// are shell commands, so that pasted (or sourced) they set the
		// variables for the commands run after them, not for the shell
		// alone.
		fmt.Fprintf(stdout, "export CONTEXTSVC_BASE_URL=%s/v1\n", base)
		logger.Info("contextsvc-mock proxying: every /v1 request goes to the upstream, and each request and answer is held to the contract's document",
			"baseURL", base+"/v1", "upstream", st.upstream, "upstreamTimeout", st.upstreamTimeout, "upstreamIdleTimeout", st.upstreamIdle,
			"maxValidatedBody", mockserver.MaxValidatedBody, "admin", st.admin)
	} else {
		// stdout carries only these two lines, so a script can read them;
		// pasted or sourced, they set the variables for what runs next.
		fmt.Fprintf(stdout, "export CONTEXTSVC_BASE_URL=%s/v1\nexport CONTEXTSVC_API_KEY=%s\n", base, shellWord(srv.DefaultKey().Token))
		logger.Info("contextsvc-mock serving", "baseURL", base+"/v1", "keys", len(srv.Keys()), "accounts", accountNames(srv.Keys()),
			"admin", st.admin, "fakeClock", st.fakeClock, "retrySchedule", (&scheduleFlag{st.schedule}).String(), "stateFile", stateFileText(st))
	}
	if everyInterface {
		// Any name of this machine serves from elsewhere; its host name
		// is the one most likely to resolve there.
		host, _ := os.Hostname()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		logger.Info("listening on every interface: use "+base+" on this machine, and this machine's name or address from others",
			"addr", ln.Addr().String(), "fromOthers", "http://"+net.JoinHostPort(cmp.Or(host, "HOSTNAME"), port)+"/v1")
	}
	if st.admin {
		logger.Info("dashboard: open it in a browser", "url", base+"/_mock/ui/")
		warnAdminExposed(logger, ln.Addr(), st.adminAuth != nil)
	}
	if st.fakeClock {
		// The fake clock starts at the real time (or where a state file's
		// stood); advanced, it stamps events ahead of every receiver's
		// clock.
		logger.Info("fake clock: time moves only by POST /_mock/clock/advance (GET /_mock/clock reads it). " +
			"Receivers that check an event's age compare its timestamp with their own clock: once this clock is more than 5 minutes ahead of real time (advanced), " +
			"they refuse the events as in the future, and once it is more than 27 hours behind (not advanced for a day), as too old " +
			"(contextsvc.NewWebhookHandler's defaults). Then run examples/receiver with -replay-window 0, " +
			"or give a Go receiver contextsvc.WithWebhookClock with the mock's time; before then no receiver needs anything")
	}

	code := exitOK
	select {
	case <-ctx.Done():
		logger.Info("shutting down", "timeout", st.shutdownTimeout)
	case err := <-served:
		logger.Error("server stopped", "error", err)
		code = exitError
	}
	sctx, cancel := context.WithTimeout(context.Background(), st.shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		logger.Warn("requests still running at the deadline were cut off", "error", err)
	}
	err = srv.Close(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("webhook delivery attempts still running at the deadline were canceled", "error", sctx.Err())
	}
	var sfe *mockserver.StateFileError
	if errors.As(err, &sfe) {
		logger.Error("the state at shutdown is lost: the state file could not be written", "error", sfe)
		code = exitError
	}
	pending := len(srv.Deliveries(mockserver.DeliveryFilter{State: mockserver.DeliveryPending}))
	logger.Info("stopped", "pendingDeliveries", pending)
	return code
}
