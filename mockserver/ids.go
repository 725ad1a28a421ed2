package mockserver

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// idEncoding is lowercase base32 without padding: ids stay URL-safe and
// case-insensitive readable.
var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newID returns prefix followed by 24 characters from crypto/rand, as the
// contract asks (at least 20 after the prefix). prefix includes the
// underscore, e.g. "ctx_".
func newID(prefix string) string {
	var b [15]byte // 15 bytes = 24 base32 characters
	_, _ = rand.Read(b[:])
	return prefix + strings.ToLower(idEncoding.EncodeToString(b[:]))
}
