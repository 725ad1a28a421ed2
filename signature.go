package contextsvc

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// SignaturePrefix starts every signature header value.
const SignaturePrefix = "sha256="

// Sign returns the signature header value for payload: "sha256=" followed by
// the lowercase hexadecimal HMAC-SHA256 of payload keyed with secret. The
// mock server signs its deliveries with it; receivers can use it in tests.
func Sign(payload []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(payload)
	return SignaturePrefix + hex.EncodeToString(m.Sum(nil))
}
