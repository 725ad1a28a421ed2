package mockserver

import "github.com/contextsvc/contextsvc-go/mockserver/internal/model"

// StoredContext is a snapshot of a stored context, for tests: its Account,
// ID, current Name, Content, Tags (never nil) and Version, when it was
// created and last updated, and every recorded version, oldest first
// (Versions). Its fields are documented with its definition,
// [model.StoredContext].
type StoredContext = model.StoredContext

// StoredVersion is one recorded version of a context: its number, the
// name, content and tags as of it, when it was recorded and by which user
// ("user_…"), and what it changed from the one before. Its fields are
// documented with its definition, [model.StoredVersion].
type StoredVersion = model.StoredVersion

// Snapshot is a deep copy of everything the server stores (contexts with
// their versions, webhooks), ordered by account in key order then by
// creation; tests compare one taken before and after an action.
type Snapshot = model.Snapshot

// ErrContextNotFound is returned by Go methods given the id of no live
// context.
var ErrContextNotFound = model.ErrContextNotFound
