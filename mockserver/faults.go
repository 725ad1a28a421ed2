package mockserver

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// Fault makes matching /v1 requests fail or slow down, so a client's own
// retry handling can be tested against the mock. By default (Mode empty or
// [FaultInstead]) the request does not run: Status is answered instead. In
// [FaultAfter] and [FaultDrop] modes the request runs (stores, fires its
// events, records its idempotency key) and then its answer is lost, as when
// a proxy fails or a connection breaks after the service acted: the case
// idempotency keys are for. A fault matches a request
// after it has been authenticated and has passed the key's rate limit (as a
// real server's failure would: a request without a valid key still gets its
// 401, and a faulted request has used a token). Each match counts Times
// down; at zero the fault is gone. When several faults match, the oldest
// is used.
type Fault struct {
	// Method is the HTTP method to match; empty matches any.
	Method string
	// Path is the request path to match exactly (for example
	// "/v1/contexts"), or a prefix when it ends in "*" ("/v1/contexts/*");
	// empty matches every /v1 path.
	Path string
	// Status, when set (400 to 599; 500 to 599 in FaultAfter mode), is
	// answered instead of running the request (FaultInstead) or instead of
	// its own answer (FaultAfter), with the contract's error body of the
	// matching type (rate_limited for 429, internal for 500, unavailable
	// for 503, …). FaultAfter needs one; FaultDrop refuses one.
	Status int
	// RetryAfter is sent as Retry-After, in whole seconds, with a 429 or
	// 503. A 429 without it sends Retry-After: 1, as the contract requires
	// one. AddFault refuses it with another Status, and when it is
	// negative or not a whole number of seconds (the header cannot say
	// 1.5 s).
	RetryAfter time.Duration
	// Latency is waited (in real time, even on a fake clock) before the
	// request runs or Status is answered. A request canceled meanwhile is
	// dropped.
	Latency time.Duration
	// Times is how many more requests the fault applies to; 0 means 1.
	Times int
	// Mode says whether the request runs; empty means FaultInstead.
	Mode FaultMode
}

// FaultMode says what a [Fault] does with the request it matches.
type FaultMode string

// The fault modes. In the admin API they are the values of "mode".
const (
	// FaultInstead answers Status instead of running the request (after
	// Latency, when given); with only a Latency, the request runs late.
	FaultInstead FaultMode = "instead"
	// FaultAfter runs the request (after Latency), then throws its answer
	// away and answers Status, a 5xx, instead: the service acted, the
	// client hears of a failure.
	FaultAfter FaultMode = "after"
	// FaultDrop runs the request (after Latency), then closes the
	// connection without any answer: the client sees a transport error.
	FaultDrop FaultMode = "drop"
)

// losesAnswer reports whether the fault runs the request and loses its
// answer.
func (f Fault) losesAnswer() bool { return f.Mode == FaultAfter || f.Mode == FaultDrop }

// ErrInvalidFault is wrapped by the error [Server.AddFault] returns for a
// fault that could never apply.
var ErrInvalidFault = errors.New("mockserver: invalid fault")

// ErrTooManyFaults is wrapped by the error [Server.AddFault] returns when
// [MaxFaults] faults are already active.
var ErrTooManyFaults = errors.New("mockserver: too many faults")

// MaxFaults is how many faults may be active at once; AddFault refuses
// more (the admin API answers 409), so a runaway script cannot grow the
// list without bound.
const MaxFaults = 1000

// faultRule is a stored fault; its Times counts down under Server.faultMu.
// seq orders the list and keys its pages.
type faultRule struct {
	Fault
	seq uint64
}

// validate reports what is wrong with f, and the admin API's name of the
// field at fault.
func (f Fault) validate() (field string, err error) {
	switch {
	case f.Mode != "" && f.Mode != FaultInstead && f.Mode != FaultAfter && f.Mode != FaultDrop:
		return "mode", fmt.Errorf("%w: mode %q is not instead, after or drop", ErrInvalidFault, f.Mode)
	case f.Mode == FaultAfter && (f.Status < 500 || f.Status > 599):
		return "status", fmt.Errorf("%w: mode after needs a status from 500 to 599 (the answer a failing proxy gives)", ErrInvalidFault)
	case f.Mode == FaultDrop && f.Status != 0:
		return "status", fmt.Errorf("%w: mode drop closes the connection and sends no status", ErrInvalidFault)
	case f.Mode == FaultDrop && f.RetryAfter != 0:
		return "retryAfter", fmt.Errorf("%w: mode drop sends no Retry-After", ErrInvalidFault)
	case f.Status == 0 && f.Latency <= 0 && f.Mode != FaultDrop:
		return "status", fmt.Errorf("%w: give a status (400 to 599), a latency, or both", ErrInvalidFault)
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return "status", fmt.Errorf("%w: status %d is not between 400 and 599", ErrInvalidFault, f.Status)
	case f.RetryAfter < 0:
		return "retryAfter", fmt.Errorf("%w: retryAfter must not be negative", ErrInvalidFault)
	case f.RetryAfter%time.Second != 0:
		return "retryAfter", fmt.Errorf("%w: retryAfter %v is not a whole number of seconds, which Retry-After needs", ErrInvalidFault, f.RetryAfter)
	case f.RetryAfter > 0 && f.Status != http.StatusTooManyRequests && f.Status != http.StatusServiceUnavailable:
		// Said rather than silently dropped: the user expects the header.
		return "retryAfter", fmt.Errorf("%w: retryAfter is sent only with status 429 or 503", ErrInvalidFault)
	case f.Latency < 0:
		return "latencyMs", fmt.Errorf("%w: latency must not be negative", ErrInvalidFault)
	case f.Latency > maxFaultLatency:
		return "latencyMs", fmt.Errorf("%w: latency over %s", ErrInvalidFault, maxFaultLatency)
	case f.Times < 0:
		return "times", fmt.Errorf("%w: times must not be negative", ErrInvalidFault)
	case strings.IndexFunc(f.Method, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return "method", fmt.Errorf("%w: method %q must be printable ASCII without spaces", ErrInvalidFault, f.Method)
	case strings.IndexFunc(f.Path, unicode.IsControl) >= 0:
		return "path", fmt.Errorf("%w: path %q must not contain control characters", ErrInvalidFault, f.Path)
	case f.Path != "" && !strings.HasPrefix(f.Path, "/"):
		return "path", fmt.Errorf("%w: path %q must start with /", ErrInvalidFault, f.Path)
	case strings.Contains(strings.TrimSuffix(f.Path, "*"), "*"):
		return "path", fmt.Errorf("%w: path %q may have * only at its end", ErrInvalidFault, f.Path)
	}
	return "", nil
}

// normalized fills the defaults: Times 1, the method in upper case. An
// empty Mode stays empty (it means FaultInstead), so faults made before
// modes existed compare as they did.
func (f Fault) normalized() Fault {
	if f.Times == 0 {
		f.Times = 1
	}
	if f.Mode == FaultInstead {
		f.Mode = ""
	}
	f.Method = strings.ToUpper(f.Method)
	return f
}

// maxFaultLatency keeps a typo from hanging a client for hours.
const maxFaultLatency = 5 * time.Minute

func (f Fault) matches(r *http.Request) bool {
	if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
		return false
	}
	if p, ok := strings.CutSuffix(f.Path, "*"); ok {
		return strings.HasPrefix(r.URL.Path, p)
	}
	return f.Path == "" || f.Path == r.URL.Path
}

// AddFault makes the next f.Times requests matching f fail or slow down
// (see [Fault]). It fails with an error wrapping [ErrInvalidFault] when f
// has neither a status in 400 to 599 nor a latency (mode instead), no
// status in 500 to 599 (mode after), a status (mode drop), a RetryAfter
// without status 429 or 503, or another bad field, and with one wrapping
// [ErrTooManyFaults] when [MaxFaults] are active.
func (s *Server) AddFault(f Fault) error {
	if _, err := f.validate(); err != nil {
		return err
	}
	f = f.normalized()
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	if len(s.faults) >= MaxFaults {
		return fmt.Errorf("%w: %d are active; clear them first", ErrTooManyFaults, len(s.faults))
	}
	s.faultSeq++
	s.faults = append(s.faults, &faultRule{Fault: f, seq: s.faultSeq})
	s.hasFaults.Store(true)
	s.changes.Publish(changes.Change{Kind: changes.KindFaults, Action: "added"})
	return nil
}

// faultPage returns up to limit active faults added after position after,
// oldest first, and the position to continue from when more follow (0 when
// none do).
func (s *Server) faultPage(after uint64, limit int) (out []Fault, next uint64) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	i := sort.Search(len(s.faults), func(i int) bool { return s.faults[i].seq > after })
	end := min(i+limit, len(s.faults))
	for _, f := range s.faults[i:end] {
		out = append(out, f.Fault)
	}
	if end < len(s.faults) {
		next = s.faults[end-1].seq
	}
	return out, next
}

// Faults returns the faults still active, oldest first, each with the
// number of requests it still applies to in Times.
func (s *Server) Faults() []Fault {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	out := make([]Fault, len(s.faults))
	for i, f := range s.faults {
		out[i] = f.Fault
	}
	return out
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() { s.clearFaults(true) }

// clearFaults removes every fault, and tells the dashboards when notify
// is set (Reset tells them of everything at once).
func (s *Server) clearFaults(notify bool) {
	s.faultMu.Lock()
	s.faults = nil
	s.hasFaults.Store(false)
	s.faultMu.Unlock()
	if notify {
		s.changes.Publish(changes.Change{Kind: changes.KindFaults, Action: "cleared"})
	}
}

// takeFault finds the oldest fault matching r and counts it down.
func (s *Server) takeFault(r *http.Request) (Fault, bool) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	for i, f := range s.faults {
		if !f.matches(r) {
			continue
		}
		got := f.Fault
		f.Times--
		if f.Times <= 0 {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			s.hasFaults.Store(len(s.faults) > 0)
		}
		s.changes.Publish(changes.Change{Kind: changes.KindFaults, Action: "used"})
		return got, true
	}
	return Fault{}, false
}

// injectFault applies the first fault matching r: it waits the fault's
// latency, then, in mode instead, writes its status if it has one. It
// returns the fault (the zero Fault when none matched) and reports whether
// the request is done (answered, or canceled while waiting); a fault that
// loses the answer is left to serveLosingAnswer.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request) (Fault, bool) {
	// Without faults (the usual case) requests do not contend for faultMu.
	if !s.hasFaults.Load() {
		return Fault{}, false
	}
	f, ok := s.takeFault(r)
	if !ok {
		return Fault{}, false
	}
	if f.Latency > 0 {
		// Real time on purpose: the client waits on a real network.
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return f, true
		}
		// The body's time-out counts from when the server starts reading
		// it, which is now.
		s.armBodyDeadline(w, r)
	}
	if f.Status == 0 || f.losesAnswer() {
		return f, false
	}
	httpapi.WriteError(w, faultError(w.Header(), f))
	return f, true
}

// serveLosingAnswer runs the request through serve with a writer that
// throws its answer away, then loses the answer as f says: FaultAfter
// answers f's status instead, FaultDrop closes the connection unanswered.
func (s *Server) serveLosingAnswer(w http.ResponseWriter, r *http.Request, f Fault, serve func(http.ResponseWriter)) {
	// The operation's error bodies quote the request id, so its header
	// map starts as a copy of the real one.
	serve(&lostAnswerWriter{header: w.Header().Clone()})
	if f.Mode == FaultAfter {
		httpapi.WriteError(w, faultError(w.Header(), f))
		return
	}
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
		if tw, ok := w.(*trackingWriter); ok {
			// The request log shows status 0: no answer was sent.
			tw.wrote, tw.status = true, 0
		}
		return
	}
	// A connection that cannot be taken over (HTTP/2): abort the
	// response, which net/http turns into a reset stream.
	panic(http.ErrAbortHandler)
}

// lostAnswerWriter is the writer of a request whose answer a fault loses.
type lostAnswerWriter struct{ header http.Header }

func (l *lostAnswerWriter) Header() http.Header         { return l.header }
func (l *lostAnswerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (l *lostAnswerWriter) WriteHeader(int)             {}

// faultError is the contract's error for an injected status, with the
// headers that status carries.
func faultError(h http.Header, f Fault) *httpapi.Error {
	e := &httpapi.Error{Status: f.Status, Message: fmt.Sprintf("injected fault: %d %s", f.Status, http.StatusText(f.Status))}
	switch {
	case f.Status == http.StatusUnauthorized:
		e.Type = httpapi.TypeUnauthorized
		h["Www-Authenticate"] = []string{"Bearer"}
	case f.Status == http.StatusForbidden:
		e.Type = httpapi.TypeForbidden
	case f.Status == http.StatusNotFound:
		e.Type = httpapi.TypeNotFound
	case f.Status == http.StatusMethodNotAllowed:
		e.Type = httpapi.TypeMethodNotAllowed
	case f.Status == http.StatusConflict:
		e.Type = httpapi.TypeConflict
	case f.Status == http.StatusRequestEntityTooLarge:
		e.Type = httpapi.TypePayloadTooLarge
	case f.Status == http.StatusTooManyRequests:
		e.Type = httpapi.TypeRateLimited
		if h["X-Ratelimit-Limit"] != nil {
			h["X-Ratelimit-Remaining"] = []string{"0"}
		}
		h["Retry-After"] = []string{strconv.FormatInt(int64(max(f.RetryAfter, time.Second)/time.Second), 10)}
	case f.Status == http.StatusServiceUnavailable:
		e.Type = httpapi.TypeUnavailable
		if f.RetryAfter > 0 {
			h["Retry-After"] = []string{strconv.FormatInt(int64(f.RetryAfter/time.Second), 10)}
		}
	case f.Status >= 500:
		e.Type = httpapi.TypeInternal
	default:
		e.Type = httpapi.TypeInvalidRequest
	}
	return e
}
