package mockserver

import "github.com/contextsvc/contextsvc-go/mockserver/internal/model"

// Event is one recorded event: its envelope fields (ID "evt_…", Type,
// Timestamp on the server's clock, Data), the Account whose action fired
// it, and the exact envelope bytes {"id","type","timestamp","data"} (Body)
// that deliveries send and sign; Data is the tail of Body. Its JSON is
// the admin API's, {"id","type","timestamp","account","data"}, the time in
// RFC 3339 UTC with millisecond precision. Its fields are documented with
// its definition, [model.Event].
type Event = model.Event

// ErrUnknownAccount is wrapped by the error [Server.EmitEvent] returns for
// an account no key belongs to.
var ErrUnknownAccount = model.ErrUnknownAccount

// ErrInvalidEvent is wrapped by the error [Server.EmitEvent] returns for an
// event type or data it cannot send.
var ErrInvalidEvent = model.ErrInvalidEvent
