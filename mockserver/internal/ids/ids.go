// Package ids makes the ids of the mock server's resources: a prefix
// naming the kind ("ctx_", "wh_", "evt_", "dlv_"…) and lowercase base32.
//
// It owns the spelling of an id and nothing else: which prefix a kind
// has is its owner's. It imports nothing of the mock server.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// encoding is lowercase base32 without padding: ids stay URL-safe and
// case-insensitive readable.
var encoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// New returns prefix followed by 24 characters from crypto/rand, as the
// contract asks (at least 20 after the prefix). prefix includes the
// underscore, e.g. "ctx_".
func New(prefix string) string {
	var b [15]byte // 15 bytes = 24 base32 characters
	_, _ = rand.Read(b[:])
	return prefix + Encode(b[:])
}

// Encode returns b as the text of an id: lowercase base32 without padding.
func Encode(b []byte) string { return strings.ToLower(encoding.EncodeToString(b)) }
