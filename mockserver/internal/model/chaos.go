package model

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Chaos is the settings of a chaos mode: mockserver.Chaos. The zero
// Chaos injects nothing; the chaos package reads one from a SPEC
// ("seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1"), checks it
// and draws its decisions.
type Chaos struct {
	// Seed is the source of every decision: the same seed and the same
	// requests give the same decisions. 0 means none given: the server
	// chooses one when the mode is set, and says which. At most
	// MaxChaosSeed.
	Seed uint64
	// Duplicate is the probability (0 to 1) that a delivery attempt the
	// receiver acknowledged is sent again, as when its answer is lost:
	// the same event id and body, a new attempt of the same delivery,
	// 1 ms to Delay later.
	Duplicate float64
	// Reorder is the probability (0 to 1) that a delivery's first attempt
	// is held back 1 ms to Delay, so that a later event of the same
	// context can overtake it.
	Reorder float64
	// Delay is the longest hold of a delivery, and the longest wait before
	// a duplicate, on the server's clock: a whole number of milliseconds
	// from 1 ms to MaxChaosDelay. 0 means DefaultChaosDelay (2 s).
	Delay time.Duration
	// APIError is the probability (0 to 1) that a /v1 request fails,
	// instead of running, with a status drawn from those the contract
	// lets the service answer: 429 (with Retry-After), 500, 502 or 503.
	APIError float64
}

// The bounds of a chaos mode's settings: mockserver.DefaultChaosDelay and
// its neighbours.
const (
	// DefaultChaosDelay is the Delay of a Chaos that gives none.
	DefaultChaosDelay = 2 * time.Second
	// MaxChaosDelay is the longest Delay: a delivery is never held back,
	// nor a duplicate kept waiting, longer.
	MaxChaosDelay = 5 * time.Minute
	// MaxChaosSeed is the largest seed, the largest integer a JSON
	// reader (a browser's, the dashboard's) keeps exactly.
	MaxChaosSeed = 1<<53 - 1
	// MaxChaosDecisions is how many decisions a ChaosReport lists, the
	// newest.
	MaxChaosDecisions = 100
)

// String returns the settings as a SPEC that reads back to them: the seed
// (when there is one), each probability that is not 0, and the delay when
// duplicate or reorder use it, in that order; "" for the zero Chaos.
func (c Chaos) String() string {
	var parts []string
	if c.Seed != 0 {
		parts = append(parts, "seed="+strconv.FormatUint(c.Seed, 10))
	}
	prob := func(key string, p float64) {
		if p != 0 {
			parts = append(parts, key+"="+strconv.FormatFloat(p, 'g', -1, 64))
		}
	}
	prob("duplicate", c.Duplicate)
	prob("reorder", c.Reorder)
	if c.Duplicate != 0 || c.Reorder != 0 {
		d := c.Delay
		if d == 0 {
			d = DefaultChaosDelay
		}
		parts = append(parts, "delay="+d.String())
	}
	prob("api-error", c.APIError)
	return strings.Join(parts, ",")
}

// ChaosAction is what chaos did: mockserver.ChaosAction.
type ChaosAction string

// The actions of chaos.
const (
	// ChaosHeld: a delivery's first attempt was held back (reorder).
	ChaosHeld ChaosAction = "held"
	// ChaosDuplicate: an attempt the receiver had acknowledged was sent
	// again (duplicate).
	ChaosDuplicate ChaosAction = "duplicate"
	// ChaosAPIError: a /v1 request was answered with an error instead of
	// running (api-error).
	ChaosAPIError ChaosAction = "api-error"
)

// ChaosEffect is what chaos did to one delivery attempt:
// mockserver.ChaosEffect. The zero ChaosEffect is none.
type ChaosEffect struct {
	// Action is ChaosHeld (the attempt was held back Delay past when its
	// event fired) or ChaosDuplicate (it repeats the delivery's
	// acknowledged attempt before it, sent Delay after that one ended).
	Action ChaosAction `json:"action"`
	// Delay is how long, on the server's clock.
	Delay time.Duration `json:"delayNs"`
}

// ChaosDecision is one decision of chaos that changed something:
// mockserver.ChaosDecision.
type ChaosDecision struct {
	// Action is what was done.
	Action ChaosAction
	// At is when, on the server's clock.
	At time.Time
	// Request is the ordinal of the /v1 request that was failed
	// (ChaosAPIError): the n-th since the mode was set.
	Request uint64
	// Method, Path and RequestID are that request's; Status is the status
	// it was answered.
	Method, Path, RequestID string
	Status                  int
	// Event is the ordinal of the event whose delivery was held or
	// duplicated (ChaosHeld, ChaosDuplicate): the n-th fired since the
	// mode was set. EventID and DeliveryID name them.
	Event               uint64
	EventID, DeliveryID string
	// Attempt is the number of the attempt a duplicate repeats.
	Attempt int
	// Delay is how long the delivery is held, or how long after the
	// acknowledged attempt the duplicate is due.
	Delay time.Duration
}

// ChaosReport is a chaos mode as it stands: mockserver.ChaosReport.
type ChaosReport struct {
	// On is whether a chaos mode is set.
	On bool
	// Chaos is its settings, Seed the seed in use (Delay filled in); zero
	// when off.
	Chaos Chaos
	// SeedChosen says the server chose the seed (none was given).
	SeedChosen bool
	// Since is when it was set, or its ordinals last started over (a
	// reset), on the server's clock.
	Since time.Time
	// Requests and Events are how many /v1 requests and events it has
	// counted since: the ordinals its decisions are keyed on.
	Requests, Events uint64
	// APIErrors, Held and Duplicates count its decisions of each action
	// since.
	APIErrors, Held, Duplicates uint64
	// Decisions are its latest decisions, newest first, at most
	// MaxChaosDecisions.
	Decisions []ChaosDecision
}

// ErrInvalidChaos is wrapped (matched by errors.Is) by the error for
// chaos settings that cannot be used: a *ChaosError, from a SPEC or a
// Chaos.
var ErrInvalidChaos = errors.New("mockserver: invalid chaos")

// ChaosError says what is wrong with chaos settings:
// mockserver.ChaosError. errors.Is matches it with ErrInvalidChaos.
type ChaosError struct {
	// Key is the SPEC key at fault (seed, duplicate, reorder, delay,
	// api-error), or "" when the SPEC as a whole is.
	Key string
	// Message says what is wrong, in words.
	Message string
}

// Error returns "mockserver: chaos: KEY: MESSAGE".
func (e *ChaosError) Error() string {
	if e.Key == "" {
		return "mockserver: chaos: " + e.Message
	}
	return "mockserver: chaos: " + e.Key + ": " + e.Message
}

// Is makes errors.Is match ErrInvalidChaos.
func (e *ChaosError) Is(target error) bool { return target == ErrInvalidChaos }
