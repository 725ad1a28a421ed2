// Package mockrules holds the rules the mock server holds its users' names
// to (account names, admin host names, admin user names) and the two names
// it derives from theirs (an account's user id, a token as it is shown).
//
// It sits at the module's root so that every command may check a flag
// the way the server will, before the server starts (contextsvc-mock
// today, and any command that runs the mock), and the mock server's own
// packages use it too: each rule is written once. Its errors never repeat
// what they refuse when that may sit beside a secret (an account name in
// a -key flag, after the token), and carry no package prefix: the caller
// says whose error it is.
package mockrules

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxAccountLen bounds an account name.
const MaxAccountLen = 64

// AccountPattern is the grammar of an account name, as the mock server's
// OpenAPI document states it.
const AccountPattern = `^[A-Za-z0-9_.-]{1,64}$`

// Account checks an account name: 1 to 64 characters of A-Z, a-z, 0-9,
// '_', '.' and '-' (AccountPattern). Names are used as they are (they are
// the account ids the admin API shows), so they stay the same from one
// start to the next. The error never repeats the name: in a -key flag it
// sits beside the token.
func Account(name string) error {
	if name == "" || len(name) > MaxAccountLen {
		return fmt.Errorf("an account must be 1 to %d characters, got %d", MaxAccountLen, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Errorf("an account may hold only A-Z, a-z, 0-9, '_', '.' and '-'; character %d (%q) is not one", i+1, name[i:i+1])
		}
	}
	return nil
}

// idEncoding is the text of the mock server's ids: lowercase base32
// without padding (URL-safe, and readable in any case).
var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// EncodeID returns b as the text of an id (after its prefix): lowercase
// base32 without padding.
func EncodeID(b []byte) string { return strings.ToLower(idEncoding.EncodeToString(b)) }

// AccountUser returns the user id the mock server gives the keys of an
// account that name no user: "user_" and 26 lowercase base32 characters
// of the SHA-256 of the account name. It depends on the name alone (never
// on a token), so the same account has the same user at every start, and
// the createdBy, updatedBy… of stored versions and events stay true
// across restarts.
func AccountUser(account string) string {
	sum := sha256.Sum256([]byte("contextsvc-mock user of account " + account))
	return "user_" + EncodeID(sum[:16])
}

// MaxAdminHostLen is the longest admin host name (a DNS name's limit).
const MaxAdminHostLen = 253

// AdminHost checks a name the admin routes may answer to besides IP
// addresses and localhost (mockserver.WithAdminHosts, the command's
// -admin-host): a host name without a port, 1 to 253 characters of A-Z,
// a-z, 0-9, '-', '_' and '.', optionally starting with "." (the name and
// every name under it).
func AdminHost(name string) error {
	bare := strings.TrimPrefix(name, ".")
	if bare == "" || len(name) > MaxAdminHostLen {
		return fmt.Errorf("an admin host must be a host name of 1 to %d characters, got %q", MaxAdminHostLen, name)
	}
	for i := 0; i < len(bare); i++ {
		c := bare[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		case c == ':':
			return fmt.Errorf("admin host %q: give the name without a port (every port is allowed)", name)
		default:
			return fmt.Errorf("admin host %q: a host name holds only A-Z, a-z, 0-9, '-', '_' and '.' (and may start with '.')", name)
		}
	}
	return nil
}

// AdminUser checks a user name of the admin credentials file
// (mockserver.WithAdminAuth's, the command's -hash-password USER): 1 or
// more printable characters of valid UTF-8, without ':' (which ends the
// name in a line).
func AdminUser(name string) error {
	if name == "" || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f || r == ':' }) {
		return fmt.Errorf("an admin user name must be 1 or more printable characters without ':', got %q", name)
	}
	return nil
}

// MaskToken returns an API key's token as the dashboard, the admin API
// and the command show it: its first characters and its last, never the
// whole of it. A token of 16 characters or more shows its first 7 and
// last 4 ("sk_test…3f9a"); a shorter one shows at most a third of its
// start and a quarter of its end, and one of fewer than 3 characters
// shows nothing but "…".
func MaskToken(token string) string {
	runes := []rune(token)
	n := len(runes)
	head, tail := min(7, n/3), min(4, n/4)
	return string(runes[:head]) + "…" + string(runes[n-tail:])
}
