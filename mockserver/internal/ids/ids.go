// Package ids makes the ids of the mock server's resources: a prefix
// naming the kind ("ctx_", "wh_", "evt_", "dlv_"…) and lowercase base32.
//
// It owns the making of an id and nothing else: which prefix a kind has
// is its owner's, and the text of the bytes is mockrules' (an account's
// user id is spelled the same way). It imports nothing of the mock server.
package ids

import (
	"crypto/rand"

	"github.com/contextsvc/contextsvc-go/internal/mockrules"
)

// New returns prefix followed by 24 characters from crypto/rand, as the
// contract asks (at least 20 after the prefix). prefix includes the
// underscore, e.g. "ctx_".
func New(prefix string) string {
	var b [15]byte // 15 bytes = 24 base32 characters
	_, _ = rand.Read(b[:])
	return prefix + Encode(b[:])
}

// Encode returns b as the text of an id: lowercase base32 without padding
// (mockrules.EncodeID, which an account's user id is spelled with too).
func Encode(b []byte) string { return mockrules.EncodeID(b) }
