package mockserver

import "github.com/contextsvc/contextsvc-go/mockserver/internal/model"

// Fault makes matching /v1 requests fail or slow down, so a client's own
// retry handling can be tested against the mock ([Server.AddFault], POST
// /_mock/faults). It matches by Method (empty: any) and Path (exact, or a
// prefix when it ends in "*"; empty: every /v1 path), and applies Times
// times (0 means 1); at zero it is gone. When several faults match, the
// oldest is used.
//
// By default (Mode empty or [FaultInstead]) the request does not run:
// Status (400 to 599) is answered instead, with the contract's error body
// of the matching type (rate_limited for 429, internal for 500,
// unavailable for 503, …) and RetryAfter as Retry-After (in whole seconds,
// with a 429 or 503; a 429 without it sends Retry-After: 1). Latency is
// waited first (in real time, even on a fake clock; a request canceled
// meanwhile is dropped); with only a Latency, the request runs late. In
// [FaultAfter] and [FaultDrop] modes the request runs (stores, fires its
// events, records its idempotency key) and then its answer is lost, as
// when a proxy fails or a connection breaks after the service acted: the
// case idempotency keys are for. A fault matches a request after it has
// been authenticated and has passed the key's rate limit (as a real
// server's failure would: a request without a valid key still gets its
// 401, and a faulted request has used a token). Its fields are documented
// with its definition, [model.Fault].
type Fault = model.Fault

// FaultMode says what a [Fault] does with the request it matches.
type FaultMode = model.FaultMode

// The fault modes. In the admin API they are the values of "mode".
const (
	// FaultInstead ("instead") answers Status instead of running the
	// request (after Latency, when given); with only a Latency, the
	// request runs late.
	FaultInstead FaultMode = model.FaultInstead
	// FaultAfter ("after") runs the request (after Latency), then throws
	// its answer away and answers Status, a 5xx, instead: the service
	// acted, the client hears of a failure.
	FaultAfter FaultMode = model.FaultAfter
	// FaultDrop ("drop") runs the request (after Latency), then closes the
	// connection without any answer: the client sees a transport error.
	FaultDrop FaultMode = model.FaultDrop
)

// ErrInvalidFault is wrapped by the error [Server.AddFault] returns for a
// fault that could never apply.
var ErrInvalidFault = model.ErrInvalidFault

// ErrTooManyFaults is wrapped by the error [Server.AddFault] returns when
// [MaxFaults] faults are already active.
var ErrTooManyFaults = model.ErrTooManyFaults

// MaxFaults (1,000) is how many faults may be active at once; AddFault refuses
// more (the admin API answers 409), so a runaway script cannot grow the
// list without bound.
const MaxFaults = model.MaxFaults
