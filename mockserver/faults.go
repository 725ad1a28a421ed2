package mockserver

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/faults"
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

// engine is f as the fault list holds it.
func (f Fault) engine() faults.Fault {
	return faults.Fault{Method: f.Method, Path: f.Path, Status: f.Status, RetryAfter: f.RetryAfter, Latency: f.Latency,
		Times: f.Times, Mode: faults.Mode(f.Mode)}
}

// publicFault converts a fault of the fault list.
func publicFault(f faults.Fault) Fault {
	return Fault{Method: f.Method, Path: f.Path, Status: f.Status, RetryAfter: f.RetryAfter, Latency: f.Latency,
		Times: f.Times, Mode: FaultMode(f.Mode)}
}

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

// AddFault makes the next f.Times requests matching f fail or slow down
// (see [Fault]). It fails with an error wrapping [ErrInvalidFault] when f
// has neither a status in 400 to 599 nor a latency (mode instead), no
// status in 500 to 599 (mode after), a status (mode drop), a RetryAfter
// without status 429 or 503, or another bad field, and with one wrapping
// [ErrTooManyFaults] when [MaxFaults] are active.
func (s *Server) AddFault(f Fault) error {
	ff := f.engine()
	if _, problem := ff.Validate(); problem != "" {
		return fmt.Errorf("%w: %s", ErrInvalidFault, problem)
	}
	if n, added := s.faults.Add(ff.Normalized(), MaxFaults); !added {
		return fmt.Errorf("%w: %d are active; clear them first", ErrTooManyFaults, n)
	}
	return nil
}

// Faults returns the faults still active, oldest first, each with the
// number of requests it still applies to in Times.
func (s *Server) Faults() []Fault {
	fs := s.faults.All()
	out := make([]Fault, len(fs))
	for i, f := range fs {
		out[i] = publicFault(f)
	}
	return out
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() { s.faults.Clear(true) }

// injectFault applies the first fault matching r: it waits the fault's
// latency, then, in mode instead, writes its status if it has one. It
// returns the fault (the zero Fault when none matched) and reports whether
// the request is done (answered, or canceled while waiting); a fault that
// loses the answer is left to serveLosingAnswer.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request) (faults.Fault, bool) {
	f, ok := s.faults.Take(r)
	if !ok {
		return faults.Fault{}, false
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
	if f.Status == 0 || f.LosesAnswer() {
		return f, false
	}
	httpapi.WriteError(w, faults.ErrorFor(w.Header(), f))
	return f, true
}

// serveLosingAnswer runs the request through serve with a writer that
// throws its answer away, then loses the answer as f says: FaultAfter
// answers f's status instead, FaultDrop closes the connection unanswered.
func (s *Server) serveLosingAnswer(w http.ResponseWriter, r *http.Request, f faults.Fault, serve func(http.ResponseWriter)) {
	// The operation's error bodies quote the request id, so its header
	// map starts as a copy of the real one.
	serve(&lostAnswerWriter{header: w.Header().Clone()})
	if f.Mode == faults.After {
		httpapi.WriteError(w, faults.ErrorFor(w.Header(), f))
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
