// Package faults holds the faults injected into the mock server's /v1
// requests: their rules ([Validate]) and their match ([Matches]), the
// active ones in the order they were added ([Set], bounded, counted down
// as they apply), and the contract's error an injected status answers
// ([ErrorFor]).
//
// It owns the list and its bound. Where a fault is applied (the /v1
// request path: its latency, its answer, a lost answer) is the /v1 API's;
// the admin API and the Go API add and list faults through the Set. A
// fault is model's (mockserver.Fault), and so are the errors of adding
// one. It imports model, changes and httpapi, nothing else of the mock
// server.
package faults

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Fault is a fault (model.Fault, mockserver.Fault), and Mode what it does
// with the request it matches.
type (
	Fault = model.Fault
	Mode  = model.FaultMode
)

// The fault modes.
const (
	Instead = model.FaultInstead
	After   = model.FaultAfter
	Drop    = model.FaultDrop
)

// MaxLatency keeps a typo from hanging a client for hours.
const MaxLatency = 5 * time.Minute

// LosesAnswer reports whether f runs the request and loses its answer.
func LosesAnswer(f Fault) bool { return f.Mode == After || f.Mode == Drop }

// Validate says what is wrong with f ("" when nothing is), and the admin
// API's name of the field at fault.
func Validate(f Fault) (field, problem string) {
	switch {
	case f.Mode != "" && f.Mode != Instead && f.Mode != After && f.Mode != Drop:
		return "mode", fmt.Sprintf("mode %q is not instead, after or drop", f.Mode)
	case f.Mode == After && (f.Status < 500 || f.Status > 599):
		return "status", "mode after needs a status from 500 to 599 (the answer a failing proxy gives)"
	case f.Mode == Drop && f.Status != 0:
		return "status", "mode drop closes the connection and sends no status"
	case f.Mode == Drop && f.RetryAfter != 0:
		return "retryAfter", "mode drop sends no Retry-After"
	case f.Status == 0 && f.Latency <= 0 && f.Mode != Drop:
		return "status", "give a status (400 to 599), a latency, or both"
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return "status", fmt.Sprintf("status %d is not between 400 and 599", f.Status)
	case f.RetryAfter < 0:
		return "retryAfter", "retryAfter must not be negative"
	case f.RetryAfter%time.Second != 0:
		return "retryAfter", fmt.Sprintf("retryAfter %v is not a whole number of seconds, which Retry-After needs", f.RetryAfter)
	case f.RetryAfter > 0 && f.Status != http.StatusTooManyRequests && f.Status != http.StatusServiceUnavailable:
		// Said rather than silently dropped: the user expects the header.
		return "retryAfter", "retryAfter is sent only with status 429 or 503"
	case f.Latency < 0:
		return "latencyMs", "latency must not be negative"
	case f.Latency > MaxLatency:
		return "latencyMs", fmt.Sprintf("latency over %s", MaxLatency)
	case f.Times < 0:
		return "times", "times must not be negative"
	case strings.IndexFunc(f.Method, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return "method", fmt.Sprintf("method %q must be printable ASCII without spaces", f.Method)
	case strings.IndexFunc(f.Path, unicode.IsControl) >= 0:
		return "path", fmt.Sprintf("path %q must not contain control characters", f.Path)
	case f.Path != "" && !strings.HasPrefix(f.Path, "/"):
		return "path", fmt.Sprintf("path %q must start with /", f.Path)
	case strings.Contains(strings.TrimSuffix(f.Path, "*"), "*"):
		return "path", fmt.Sprintf("path %q may have * only at its end", f.Path)
	}
	return "", ""
}

// Normalized returns f with the defaults filled: Times 1, the method in
// upper case. An empty Mode stays empty (it means Instead), so faults made
// before modes existed compare as they did.
func Normalized(f Fault) Fault {
	if f.Times == 0 {
		f.Times = 1
	}
	if f.Mode == Instead {
		f.Mode = ""
	}
	f.Method = strings.ToUpper(f.Method)
	return f
}

// Matches reports whether f applies to r.
func Matches(f Fault, r *http.Request) bool {
	if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
		return false
	}
	if p, ok := strings.CutSuffix(f.Path, "*"); ok {
		return strings.HasPrefix(r.URL.Path, p)
	}
	return f.Path == "" || f.Path == r.URL.Path
}

// rule is a stored fault; its Times counts down under the Set's lock. seq
// orders the list and keys its pages.
type rule struct {
	Fault
	seq uint64
}

// Set is the active faults, oldest first, at most max of them. It tells
// hub of each fault added, used and cleared. It is safe for concurrent
// use.
type Set struct {
	hub    *changes.Hub
	max    int
	mu     sync.Mutex
	faults []*rule // oldest first (ascending seq)
	seq    uint64
	any    atomic.Bool // len(faults) > 0, read without mu
}

// NewSet returns an empty set of at most max faults that tells hub of its
// changes.
func NewSet(hub *changes.Hub, max int) *Set { return &Set{hub: hub, max: max} }

// Add adds f, with its defaults filled (Normalized), and returns it as
// added. It fails with an error wrapping model.ErrInvalidFault when f
// could never apply (Validate says why), and with one wrapping
// model.ErrTooManyFaults when the set holds its most already.
func (s *Set) Add(f Fault) (Fault, error) {
	if _, problem := Validate(f); problem != "" {
		return Fault{}, fmt.Errorf("%w: %s", model.ErrInvalidFault, problem)
	}
	f = Normalized(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) >= s.max {
		return Fault{}, fmt.Errorf("%w: %d are active; clear them first", model.ErrTooManyFaults, len(s.faults))
	}
	s.seq++
	s.faults = append(s.faults, &rule{Fault: f, seq: s.seq})
	s.any.Store(true)
	s.hub.Publish(changes.Change{Kind: changes.KindFaults, Action: "added"})
	return f, nil
}

// Page returns up to limit active faults added after position after,
// oldest first, and the position to continue from when more follow (0
// when none do).
func (s *Set) Page(after uint64, limit int) (out []Fault, next uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
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

// All returns the active faults, oldest first, each with the number of
// requests it still applies to in Times.
func (s *Set) All() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, len(s.faults))
	for i, f := range s.faults {
		out[i] = f.Fault
	}
	return out
}

// Len returns how many faults are active.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.faults)
}

// Clear removes every fault, and tells the hub when notify is set (a reset
// tells it of everything at once).
func (s *Set) Clear(notify bool) {
	s.mu.Lock()
	s.faults = nil
	s.any.Store(false)
	s.mu.Unlock()
	if notify {
		s.hub.Publish(changes.Change{Kind: changes.KindFaults, Action: "cleared"})
	}
}

// Take finds the oldest fault matching r and counts it down. Without
// faults (the usual case) it costs an atomic load, and requests do not
// contend for the lock.
func (s *Set) Take(r *http.Request) (Fault, bool) {
	if !s.any.Load() {
		return Fault{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if !Matches(f.Fault, r) {
			continue
		}
		got := f.Fault
		f.Times--
		if f.Times <= 0 {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			s.any.Store(len(s.faults) > 0)
		}
		s.hub.Publish(changes.Change{Kind: changes.KindFaults, Action: "used"})
		return got, true
	}
	return Fault{}, false
}

// ErrorFor is the contract's error for an injected status, with the
// headers that status carries, set on h.
func ErrorFor(h http.Header, f Fault) *httpapi.Error {
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
