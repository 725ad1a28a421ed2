// Package ids makes the ids of the mock server's resources: a prefix
// naming the kind ("ctx_", "wh_", "evt_", "dlv_"…) and lowercase base32.
//
// It owns the making of an id and nothing else: which prefix a kind has
// is its owner's, and the text of the bytes is mockrules' (an account's
// user id is spelled the same way). It imports nothing of the mock server.
package ids

import (
	"crypto/rand"
	mrand "math/rand/v2"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
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

// alphabet is lowercase base32's, which Encode writes.
const alphabet = "abcdefghijklmnopqrstuvwxyz234567"

// Fast returns prefix followed by 24 characters of lowercase base32, as
// New does, from the runtime's fast generator (math/rand/v2) rather than
// crypto/rand: for the request ids every answer carries, which must be
// unique but need not be unguessable, and which are made at the rate of
// the requests. prefix is at most 8 bytes.
func Fast(prefix string) string {
	var buf [8 + 24]byte
	n := copy(buf[:8], prefix)
	for _, r := range [2]uint64{mrand.Uint64(), mrand.Uint64()} {
		for range 12 {
			buf[n] = alphabet[r&31]
			r >>= 5
			n++
		}
	}
	return string(buf[:n])
}
