package model

import (
	"errors"
	"time"
)

// Fault makes matching /v1 requests fail or slow down: mockserver.Fault,
// whose documentation says how. The faults package matches, validates and
// counts them.
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

// FaultMode says what a [Fault] does with the request it matches:
// mockserver.FaultMode.
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

// Errors of adding a fault (mockserver.Server.AddFault, POST
// /_mock/faults: a 400 and a 409).
var (
	// ErrInvalidFault: a fault that could never apply.
	ErrInvalidFault = errors.New("mockserver: invalid fault")
	// ErrTooManyFaults: MaxFaults faults are already active.
	ErrTooManyFaults = errors.New("mockserver: too many faults")
)

// MaxFaults is how many faults may be active at once: mockserver.MaxFaults.
const MaxFaults = 1000
