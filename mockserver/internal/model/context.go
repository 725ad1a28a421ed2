package model

import (
	"errors"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// StoredContext is a copy of a stored context: mockserver.StoredContext.
type StoredContext struct {
	// Account owns the context; only its keys see it.
	Account string
	// ID is the context id ("ctx_…").
	ID string
	// Name is the current name.
	Name string
	// Content is the current Markdown text.
	Content string
	// Tags are the current tags, never nil.
	Tags []string
	// Version is the current version number, from 1.
	Version int
	// CreatedAt is when the context was created.
	CreatedAt time.Time
	// UpdatedAt is when its latest version was recorded.
	UpdatedAt time.Time
	// Versions are all recorded versions, oldest first.
	Versions []StoredVersion
}

// StoredVersion is one recorded version of a context:
// mockserver.StoredVersion. The store keeps each version as one, never
// changed once recorded.
type StoredVersion struct {
	// Version is the version number, from 1.
	Version int
	// Name is the context's name as of this version.
	Name string
	// Content is the Markdown text as of this version.
	Content string
	// Tags are the tags as of this version.
	Tags []string
	// CreatedAt is when the version was recorded.
	CreatedAt time.Time
	// CreatedBy is the user ("user_…") whose key made the change.
	CreatedBy string
	// Changes is what the version changed from the one before.
	Changes contextsvc.Changes
}

// Snapshot is a deep copy of everything the server stores:
// mockserver.Snapshot.
type Snapshot struct {
	// Contexts are every stored context with its versions.
	Contexts []StoredContext
	// Webhooks are every registered webhook.
	Webhooks []Webhook
}

// ErrContextNotFound is returned by Go methods given the id of no live
// context: mockserver.ErrContextNotFound.
var ErrContextNotFound = errors.New("mockserver: no such context")
