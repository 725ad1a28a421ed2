// Package state is the mock server's state document: what it keeps across
// a restart (contexts with all their versions, webhooks with their
// secrets, pending deliveries with their schedules, the counters and the
// cursors' salt), written as a stream ([Snapshot.WriteTo]) and read back as
// one ([Read]) on github.com/go-json-experiment/json, every field held to
// the API's own rules, a fault reported with the path of the field
// ([Error]).
//
// It owns the document's format. It reads and writes the store's and the
// delivery engine's data through their copies (store.Saved,
// delivery.Saved) and builds what they install (store.Loaded); what the
// server holds, and when it is copied or installed, is the server's, and
// the file that holds the document is the statefile package's. It imports
// delivery, httpapi, jsonwire, model, rules and store, nothing else of the
// mock server.
package state

import (
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// FormatName is the value of a state document's "format" field, so a
// JSON file that is not one is told apart with a clear error.
const FormatName = "contextsvc-mock-state"

// The values of a state document's "clock": the clock of the server that
// wrote it. Without the field, the clock is the wall clock (ClockReal),
// as in documents written before the field was.
const (
	ClockFake = "fake"
	ClockReal = "real"
)

// Snapshot is a copy of what the document holds, taken under the
// locks and written without them: strings and recorded versions never
// change once stored, so it shares them with the server. No load or reset
// runs while it is taken (stateMu); requests may, each wholly before or
// after the part of the copy it touches.
type Snapshot struct {
	// SavedAt is the server's clock when the copy was taken (after it,
	// so no time the copy holds is later), and FakeClock says that clock
	// is not the wall clock: a server on the document resumes its fake
	// clock there (see Loaded).
	SavedAt     time.Time
	FakeClock   bool
	Salt        [16]byte
	EventSeq    uint64
	DeliverySeq uint64
	Store       store.Saved
	Deliveries  []delivery.Saved
}

// Loaded is a validated state document, ready to install: the
// contexts are built (indexes aside), the deliveries carry their secrets.
type Loaded struct {
	// SavedAt is the document's savedAt (zero without one), and
	// FakeClock its "clock" is "fake": the time the server that wrote it
	// had reached, which a server starting on the document does not go
	// back from (a fake clock resumes there).
	SavedAt     time.Time
	FakeClock   bool
	Salt        *[16]byte // nil: keep the server's
	EventSeq    uint64
	DeliverySeq uint64
	Store       store.Loaded
	Deliveries  []delivery.Saved
	// counts, for the log
	Contexts, Versions, Webhooks int
}

// Version is the version of the document this reader and writer
// know, which mockserver re-exports (StateFormatVersion).
const Version = 1

// Error is why a state document was refused: model.StateError, the
// server's public mockserver.StateError.
type Error = model.StateError

// ReadConfig is what the reader needs of the server.
type ReadConfig struct {
	// Now is when a delivery with no due time is due.
	Now time.Time
	// HTTPSOnly refuses plain-http webhook urls.
	HTTPSOnly bool
	// Known reports whether the server has the account (a key's); the
	// others are refused unless AddAccounts.
	Known       func(account string) bool
	AddAccounts bool
	// MaxWebhooks is how many webhooks an account may have.
	MaxWebhooks int
}
