package mockserver

import (
	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// The service delivers each event at least once and in no promised order,
// and its API can fail; the chaos mode plays that, reproducibly, so that a
// receiver and a client are tested against it rather than against a mock
// that behaves politely. docs/mockserver.md ("Chaos") teaches it with a
// receiver's test.

// Chaos is the settings of the server's chaos mode, off by default and
// set three ways that mean the same: [WithChaos] (or [Server.SetChaos]) in
// Go, the command's -chaos SPEC, and PUT /_mock/chaos. Its String is the
// SPEC, "seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1", which
// [ParseChaos] reads back:
//
//   - Seed (seed=N, 1 to [MaxChaosSeed]) is the source of every decision;
//     0 (left out) has the server choose one, which it logs (Info) and
//     reports ([Server.Chaos], GET /_mock/chaos), so that a failing run can
//     be replayed;
//   - Duplicate (duplicate=P, 0 to 1): a delivery attempt the receiver
//     acknowledged is sent again with probability P, 1 ms to Delay later,
//     as when its answer is lost: the same event id and body, a new
//     attempt of the same delivery (X-Service-Delivery-Attempt goes on),
//     recorded as such ([ChaosEffect]). A duplicate is not duplicated
//     again, and ends its delivery succeeded whatever it gets;
//   - Reorder (reorder=P): a delivery's first attempt is held back 1 ms to
//     Delay with probability P, on the server's clock, so that a later
//     event of the same context can overtake it (on a [FakeClock], advance
//     it by Delay to let every held delivery go);
//   - Delay (delay=D, whole milliseconds from 1 ms to [MaxChaosDelay];
//     default [DefaultChaosDelay], 2 s) is the longest hold, and the
//     longest wait before a duplicate;
//   - APIError (api-error=P): a /v1 request fails with probability P,
//     instead of running, with 429 (Retry-After: 1), 500, 502 or 503 and
//     the contract's error body of its type, after its key and rate limit
//     are checked as a fault's status would be (a request a fault matches
//     is the fault's).
//
// Each decision is keyed on the seed and on ordinals the requests decide,
// never on an id nor on timing: a /v1 request's place among those the
// server routed since the mode was set (counted before its key, rate
// limit and faults are checked); a delivery's event's place among the
// events fired since (the event's ChaosOrdinal) and the delivery's among
// the event's webhooks, in registration order; a duplicate's, the number
// of the acknowledged attempt. So the same seed and the same requests,
// sent one after another to a server with the same webhooks whose
// receivers answer the same, make the same decisions, however the
// server's goroutines run. Setting the mode, and [Server.Reset], start the
// ordinals over.
//
// Every decision that changes something shows: on the attempt it changed
// ([DeliveryAttempt].Chaos), in [Server.Chaos] (counts and the newest
// decisions), in GET /_mock/chaos and the dashboard, in the log (Debug;
// the request's line says chaos=api-error), and, with telemetry, as the
// attribute contextsvc.mock.chaos on the request's or the attempt's span
// and metric, so that injected failures are counted apart from real ones.
// Faults ([Server.AddFault]) work beside it. Its fields are documented
// with its definition, [model.Chaos].
type Chaos = model.Chaos

// ChaosAction is what chaos did: [ChaosHeld], [ChaosDuplicate] or
// [ChaosAPIError].
type ChaosAction = model.ChaosAction

// The actions of chaos.
const (
	// ChaosHeld ("held"): a delivery's first attempt was held back
	// (reorder).
	ChaosHeld ChaosAction = model.ChaosHeld
	// ChaosDuplicate ("duplicate"): an attempt the receiver had
	// acknowledged was sent again (duplicate).
	ChaosDuplicate ChaosAction = model.ChaosDuplicate
	// ChaosAPIError ("api-error"): a /v1 request was answered with an
	// error instead of running (api-error).
	ChaosAPIError ChaosAction = model.ChaosAPIError
)

// ChaosEffect is what chaos did to one delivery attempt
// ([DeliveryAttempt].Chaos): held it back Delay ([ChaosHeld]), or sent it
// Delay after the acknowledged attempt it repeats ([ChaosDuplicate]). The
// zero ChaosEffect is none. Its JSON is {"action","delayNs"}. Its fields
// are documented with its definition, [model.ChaosEffect].
type ChaosEffect = model.ChaosEffect

// ChaosDecision is one decision of chaos that changed something: a /v1
// request failed (its ordinal, method, path, request id and status), or a
// delivery held back or duplicated (its event's ordinal and id, the
// delivery, the attempt repeated, the delay), and when, on the server's
// clock. [Server.Chaos] lists the newest. Its fields are documented with
// its definition, [model.ChaosDecision].
type ChaosDecision = model.ChaosDecision

// ChaosReport is the chaos mode as it stands ([Server.Chaos]): whether it
// is on, its settings with the seed in use and whether the server chose
// it, since when, the ordinals counted (requests, events), its decisions
// of each action, and the newest [MaxChaosDecisions] of them, newest
// first. Its fields are documented with its definition,
// [model.ChaosReport].
type ChaosReport = model.ChaosReport

// ChaosError says what is wrong with chaos settings: the SPEC key at
// fault (seed, duplicate, reorder, delay, api-error; "" for the SPEC as a
// whole) and why. errors.Is matches it with [ErrInvalidChaos]. Its fields
// are documented with its definition, [model.ChaosError].
type ChaosError = model.ChaosError

// ErrInvalidChaos is matched by the error for chaos settings that cannot
// be used, a [*ChaosError]: from [ParseChaos], [WithChaos] (wrapped in
// the error [Open] returns, with [ErrInvalidOption]) and
// [Server.SetChaos].
var ErrInvalidChaos = model.ErrInvalidChaos

// The bounds of the chaos mode's settings.
const (
	// DefaultChaosDelay (2 s) is the Delay of a [Chaos] that gives none.
	DefaultChaosDelay = model.DefaultChaosDelay
	// MaxChaosDelay (5 min) is the longest Delay.
	MaxChaosDelay = model.MaxChaosDelay
	// MaxChaosSeed (2^53-1) is the largest seed: the largest integer a
	// JSON reader (the dashboard's) keeps exactly.
	MaxChaosSeed = model.MaxChaosSeed
	// MaxChaosDecisions (100) is how many decisions [Server.Chaos] lists.
	MaxChaosDecisions = model.MaxChaosDecisions
)

// ParseChaos reads a SPEC, as the command's -chaos and PUT /_mock/chaos
// do: a comma-separated list of KEY=VALUE, each key at most once, among
// seed, duplicate, reorder, delay and api-error (see [Chaos]); up to 16
// spaces in a row around items, keys and values are allowed, and "" is
// the zero Chaos. A probability is written as a decimal (0.2, .5, 1) or with a
// negative exponent (1e-05), a delay in milliseconds (500ms), seconds (2s,
// 1.5s), minutes (5m) or minutes and seconds (1m30s), as a [Chaos]'s String
// writes them. It reads exactly the SPECs that openapi.yaml's
// MockChaosSpec allows (its pattern holds the ranges too). Its error is a
// [*ChaosError] naming the key at fault.
func ParseChaos(spec string) (Chaos, error) { return chaos.Parse(spec) }

// WithChaos sets the chaos mode c from the start (see [Chaos]); the
// default is none. Settings that cannot be used, or chaos on a validating
// proxy ([WithUpstream]), make [Open] return an error wrapping
// [ErrInvalidOption] and matching [ErrInvalidChaos].
func WithChaos(c Chaos) Option {
	return func(cf *config) error {
		if err := chaos.Check(c); err != nil {
			return invalidOption("WithChaos: %w", err)
		}
		cf.chaos = &c
		return nil
	}
}
