package access

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
)

// The admin routes' optional credentials: HTTP Basic, as
// browsers and curl -u send them, against an htpasswd file of
// user:bcrypt-hash lines (Mailpit's --ui-auth-file is the model). The
// server holds only the hashes.
//
// A bcrypt check costs tens of milliseconds of CPU on purpose, and the
// dashboard makes a request per list, detail and action, so a check that
// succeeds is remembered: a set of verified credentials keyed by an HMAC
// of user and password under a key made at start (so the set holds
// neither, and nothing outside the process can compute its keys), at most
// maxVerified of them. Every other request runs bcrypt, a wrong password
// too (so guessing costs what the hash's cost says), but one at a time
// (at most one core), at most checksPerSecond a second, and with at most
// maxCheckWaiters waiting: past that a request is a 429, so no client can
// make the mock burn its CPU on guesses, and a credential already
// verified is never slowed by them.

// Limits of the admin credentials.
const (
	// MaxUsers bounds the users of a credentials file; the user
	// search is linear (constant time in the name).
	MaxUsers = 1000
	// MaxBytes bounds the credentials file read.
	MaxBytes = 1 << 20
	// maxAdminCost is the highest bcrypt cost taken: 14 takes about a
	// second a check; more would let one login hold the checks for
	// seconds.
	maxAdminCost = 14
	// maxVerified bounds the remembered credentials: one per user is
	// what a file gives (a bcrypt hash matches one password), so it is
	// reached only with as many users; then the set starts over.
	maxVerified = 1024
	// checksPerSecond and maxCheckWaiters bound the bcrypt checks of
	// credentials not yet verified.
	checksPerSecond = 20
	maxCheckWaiters = 16
)

// adminRealm is the realm of the Basic challenge: the name a browser's
// login prompt shows.
const adminRealm = "contextsvc-mock admin"

// Challenge is the WWW-Authenticate of a 401 from the admin routes.
const Challenge = `Basic realm="` + adminRealm + `", charset="UTF-8"`

// User is a line of the credentials file.
type User struct {
	name     string
	nameHash [sha256.Size]byte // compared in constant time
	hash     []byte            // bcrypt
}

// Auth checks the admin routes' credentials. It is safe for concurrent
// use.
type Auth struct {
	users   []User
	hmacKey [32]byte

	mu       sync.Mutex
	verified map[[sha256.Size]byte]struct{}

	checks  chan struct{} // a slot: one bcrypt check at a time
	waiting chan struct{} // slots for the requests waiting for a check
	limiter *rate.Limiter
}

// NewAuth is a checker of users' credentials (read by ParseUsers), with
// a key of its own.
func NewAuth(users []User) *Auth {
	a := &Auth{
		users:    users,
		verified: make(map[[sha256.Size]byte]struct{}),
		checks:   make(chan struct{}, 1),
		waiting:  make(chan struct{}, maxCheckWaiters),
		limiter:  rate.NewLimiter(checksPerSecond, checksPerSecond),
	}
	_, _ = rand.Read(a.hmacKey[:])
	return a
}

// ParseUsers reads a credentials file: one "user:hash" a line, each hash
// bcrypt's ($2a$, $2b$ or $2y$, cost 4 to 14); empty lines and lines
// starting with '#' are skipped. At most MaxUsers users, MaxBytes bytes.
// Its errors name the line at fault, never a hash.
func ParseUsers(r io.Reader) ([]User, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("mockserver: reading the admin credentials: %w", err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("mockserver: the admin credentials are over %d bytes", MaxBytes)
	}
	var users []User
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), MaxBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, err := parseAdminUser(line)
		if err != nil {
			return nil, fmt.Errorf("mockserver: admin credentials, line %d: %s", n, err)
		}
		for _, other := range users {
			if other.name == u.name {
				return nil, fmt.Errorf("mockserver: admin credentials, line %d: user %q is given twice", n, u.name)
			}
		}
		if len(users) == MaxUsers {
			return nil, fmt.Errorf("mockserver: admin credentials, line %d: more than %d users", n, MaxUsers)
		}
		users = append(users, u)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mockserver: reading the admin credentials: %w", err)
	}
	if len(users) == 0 {
		return nil, errors.New("mockserver: the admin credentials name no user (lines of user:bcrypt-hash, as htpasswd -nB USER writes them)")
	}
	return users, nil
}

// parseAdminUser reads one "user:hash" line; its errors never quote the
// hash.
func parseAdminUser(line string) (User, error) {
	name, hash, ok := strings.Cut(line, ":")
	if !ok {
		return User{}, errors.New("not user:hash (htpasswd -nB USER writes such a line)")
	}
	if err := mockrules.AdminUser(name); err != nil {
		return User{}, err
	}
	hash = strings.TrimSpace(hash)
	if !strings.HasPrefix(hash, "$2") {
		return User{}, fmt.Errorf("user %q: the password hash is not bcrypt's ($2a$, $2b$ or $2y$; htpasswd -B makes one)", name)
	}
	cost, err := bcrypt.Cost([]byte(hash))
	if err != nil {
		return User{}, fmt.Errorf("user %q: the bcrypt hash is malformed (%v)", name, err)
	}
	if cost > maxAdminCost {
		return User{}, fmt.Errorf("user %q: bcrypt cost %d is over %d (each check would take seconds); 10 to 12 is plenty", name, cost, maxAdminCost)
	}
	return User{name: name, nameHash: sha256.Sum256([]byte(name)), hash: []byte(hash)}, nil
}

// Check answers whether r may use the admin routes; when not, it has
// written the 401 (or 429) and the request is done.
func (a *Auth) Check(w http.ResponseWriter, r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		w.Header()["Www-Authenticate"] = []string{Challenge}
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusUnauthorized, Type: httpapi.TypeUnauthorized,
			Message: "the admin routes and the dashboard need a user name and password (HTTP Basic: a browser asks for them, curl takes -u USER)"})
		return false
	}
	key := a.credentialKey(user, pass)
	if a.known(key) {
		return true
	}
	valid, e := a.verify(r, key, user, pass)
	if e != nil {
		w.Header()["Retry-After"] = []string{"1"}
		httpapi.WriteError(w, e)
		return false
	}
	if !valid {
		w.Header()["Www-Authenticate"] = []string{Challenge}
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusUnauthorized, Type: httpapi.TypeUnauthorized,
			Message: "wrong user name or password for the admin routes"})
		return false
	}
	a.mu.Lock()
	if len(a.verified) >= maxVerified {
		clear(a.verified)
	}
	a.verified[key] = struct{}{}
	a.mu.Unlock()
	return true
}

// known reports whether the credentials of key were verified.
func (a *Auth) known(key [sha256.Size]byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.verified[key]
	return ok
}

// credentialKey is the HMAC of a user name and password under the key
// made at start: what the set of verified credentials holds.
func (a *Auth) credentialKey(user, pass string) [sha256.Size]byte {
	m := hmac.New(sha256.New, a.hmacKey[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(user)))
	m.Write(n[:])
	m.Write([]byte(user))
	m.Write([]byte(pass))
	var out [sha256.Size]byte
	m.Sum(out[:0])
	return out
}

// verify runs the bcrypt check of credentials (key) not verified yet, in
// turn: a 429 when too many wait or the checks' rate is spent, nothing
// (and no check) when the request ends while it waits. Credentials that
// another request verified while this one waited need no check (a page's
// first requests come together, with the same password).
func (a *Auth) verify(r *http.Request, key [sha256.Size]byte, user, pass string) (bool, *httpapi.Error) {
	busy := &httpapi.Error{Status: http.StatusTooManyRequests, Type: httpapi.TypeRateLimited,
		Message: "too many admin password checks at once: try again in a second"}
	select {
	case a.waiting <- struct{}{}:
	default:
		return false, busy
	}
	defer func() { <-a.waiting }()
	select {
	case a.checks <- struct{}{}:
	case <-r.Context().Done():
		return false, busy
	}
	defer func() { <-a.checks }()
	if a.known(key) {
		return true, nil
	}
	if !a.limiter.Allow() {
		return false, busy
	}
	// Every user is looked at, each name compared in constant time, and
	// an unknown user is checked against the first user's hash, so the
	// answer takes as long whether or not the user exists.
	nameHash := sha256.Sum256([]byte(user))
	found := -1
	for i := range a.users {
		if subtle.ConstantTimeCompare(a.users[i].nameHash[:], nameHash[:]) == 1 {
			found = i
		}
	}
	hash := a.users[0].hash
	if found >= 0 {
		hash = a.users[found].hash
	}
	match := bcrypt.CompareHashAndPassword(hash, []byte(pass)) == nil
	return match && found >= 0, nil
}
