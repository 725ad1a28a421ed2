package contextsvc

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sync"
	"sync/atomic"
	"time"
)

// SignaturePrefix starts every signature header value.
const SignaturePrefix = "sha256="

// signatureHexLen is the length of the hex part of a signature header.
const signatureHexLen = 2 * sha256.Size

// Sign returns the signature header value for payload: "sha256=" followed by
// the lowercase hexadecimal HMAC-SHA256 of payload keyed with secret. The
// mock server signs its deliveries with it; receivers can use it in tests.
func Sign(payload []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(payload)
	return SignaturePrefix + hex.EncodeToString(m.Sum(nil))
}

// signatureError is the type of the signature errors. Each value is a
// sentinel: returning one allocates nothing, and its text never holds a
// secret or the expected signature.
type signatureError struct {
	msg    string
	parent *signatureError // a more general sentinel it also matches, or nil
}

func (e *signatureError) Error() string { return e.msg }

// Is makes every signature error match [ErrInvalidSignature], and a
// specific malformed-header error match [ErrMalformedSignature].
func (e *signatureError) Is(target error) bool {
	if target == ErrInvalidSignature {
		return true
	}
	return e.parent != nil && target == error(e.parent)
}

// The signature errors. Every error [VerifySignature] and [ConstructEvent]
// return about the signature matches [ErrInvalidSignature] through
// errors.Is, so a receiver can answer 401 on that one check; the others say
// why. None of them contains a secret or the expected signature.
var (
	// ErrInvalidSignature is matched by every signature error below.
	ErrInvalidSignature error = &signatureError{msg: "contextsvc: invalid webhook signature"}
	// ErrMissingSignature: the signature header is absent or empty.
	ErrMissingSignature error = &signatureError{msg: "contextsvc: missing webhook signature header"}
	// ErrMalformedSignature: the header is not "sha256=" followed by 64
	// lowercase hexadecimal digits. The error returned is one of three more
	// specific values, all matching ErrMalformedSignature.
	ErrMalformedSignature error = malformedSignature
	// ErrSignatureMismatch: the header is well formed but no configured
	// secret produces it for these bytes.
	ErrSignatureMismatch error = &signatureError{msg: "contextsvc: webhook signature does not match the payload"}
	// ErrNoSecret: no secret was given, or one of them is empty. An empty
	// secret is a misconfiguration (an unset environment variable, say);
	// accepting it would let anyone sign with "", so verification fails
	// instead of skipping it.
	ErrNoSecret error = &signatureError{msg: "contextsvc: no webhook secret configured, or an empty one"}
)

var (
	malformedSignature = &signatureError{msg: "contextsvc: malformed webhook signature header"}
	errNoPrefix        = &signatureError{msg: "contextsvc: malformed webhook signature header: no " + SignaturePrefix + " prefix", parent: malformedSignature}
	errBadLength       = &signatureError{msg: "contextsvc: malformed webhook signature header: not 64 hex digits", parent: malformedSignature}
	errNotHex          = &signatureError{msg: "contextsvc: malformed webhook signature header: not lowercase hex", parent: malformedSignature}
)

// VerifySignature checks that header, the value of the signature header
// (X-Service-Signature), is "sha256=" followed by the lowercase hexadecimal
// HMAC-SHA256 of payload keyed with one of secrets. payload must be the
// exact bytes received, before any parsing or re-encoding.
//
// Several secrets let a receiver rotate its secret without dropping
// deliveries: pass the new and the old one until the old is retired. The
// comparison is in constant time. A call without secrets, or with an empty
// secret among them, fails with [ErrNoSecret] whatever the header says.
//
// It returns nil or an error matching [ErrInvalidSignature] (and one of
// [ErrMissingSignature], [ErrMalformedSignature], [ErrSignatureMismatch],
// [ErrNoSecret]).
//
// A warm call allocates nothing and costs little more than a SHA-256 of
// payload. For that, a plain function needs somewhere to keep each
// secret's keyed HMAC state between calls: VerifySignature keeps them in a
// process-wide cache. The cache holds at most 64 secrets (the 65th
// distinct one empties it and starts over), so rotating secrets never
// grows it; lookups take no lock. A state serves one call at a time and is
// reset to its key before each use, and states are found by the exact
// secret, so calls and secrets never see each other's data, and no result
// depends on what is cached. A receiver that verifies with more than 64
// secrets (one per tenant, say) still gets right answers, but each miss
// re-keys, at about the cost of a plain crypto/hmac verifier; the handler
// made by [NewWebhookHandler] keeps its own states instead and never
// touches the cache. A retired secret's keyed state stays in memory until
// the cache starts over.
func VerifySignature(payload []byte, header string, secrets ...string) error {
	if len(secrets) == 0 {
		return ErrNoSecret
	}
	for _, s := range secrets {
		if s == "" {
			return ErrNoSecret
		}
	}
	want, err := decodeSignature(header)
	if err != nil {
		return err
	}
	for _, s := range secrets {
		if sharedMACs.get(s).verify(payload, &want) {
			return nil
		}
	}
	return ErrSignatureMismatch
}

// decodeSignature parses a header value into the MAC it carries. It reads
// the string in place into an array, so it allocates nothing. It branches
// on the header's bytes, which the sender chose and are no secret.
func decodeSignature(header string) (mac [sha256.Size]byte, err error) {
	if header == "" {
		return mac, ErrMissingSignature
	}
	if len(header) < len(SignaturePrefix) || header[:len(SignaturePrefix)] != SignaturePrefix {
		return mac, errNoPrefix
	}
	h := header[len(SignaturePrefix):]
	if len(h) != signatureHexLen {
		return mac, errBadLength
	}
	// Table lookups without a branch per digit: invalid digits map to
	// 0xff, and one OR over all of them tells whether any was invalid.
	var bad byte
	for i := range mac {
		hi, lo := unhex[h[2*i]], unhex[h[2*i+1]]
		bad |= hi | lo
		mac[i] = hi<<4 | lo&0x0f
	}
	if bad&0xf0 != 0 {
		return mac, errNotHex
	}
	return mac, nil
}

// unhex maps a lowercase hex digit to its value and any other byte to
// 0xff. Uppercase is refused: the reference says lowercase, and one
// canonical form per MAC keeps the accepted headers exactly those Sign
// produces. It is computed once and never written after.
var unhex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// keyedMAC verifies MACs for one secret. It pools HMAC states that already
// hold the secret's keyed inner and outer blocks (crypto/hmac keeps them
// after the first Reset), so a warm verification neither re-keys nor
// allocates. A pooled state is used by one goroutine at a time.
type keyedMAC struct {
	pool sync.Pool // of *macState
}

// macState is one reusable HMAC with room for its output, so Sum appends
// into memory that is already on the heap.
type macState struct {
	h   hash.Hash
	sum [sha256.Size]byte
}

func newKeyedMAC(secret string) *keyedMAC {
	key := []byte(secret)
	k := &keyedMAC{}
	k.pool.New = func() any {
		h := hmac.New(sha256.New, key)
		// The first Reset makes crypto/hmac save the keyed states, which
		// later Resets restore instead of hashing the padded key again.
		h.Reset()
		return &macState{h: h}
	}
	return k
}

// verify reports whether want is the HMAC of payload under k's secret,
// comparing in constant time.
func (k *keyedMAC) verify(payload []byte, want *[sha256.Size]byte) bool {
	st := k.pool.Get().(*macState)
	st.h.Reset()
	st.h.Write(payload)
	got := st.h.Sum(st.sum[:0])
	ok := hmac.Equal(got, want[:])
	k.pool.Put(st)
	return ok
}

// macCacheSize bounds the process-wide cache used by VerifySignature.
const macCacheSize = 64

// macCache maps secrets to their keyedMAC. Readers load an immutable map
// through an atomic pointer (no lock, no allocation); a writer copies it.
// When full it starts over, which keeps it bounded and lets the working set
// change; a miss costs only one re-keying.
type macCache struct {
	mu sync.Mutex // serialises writers
	m  atomic.Pointer[map[string]*keyedMAC]
}

// sharedMACs is VerifySignature's cache, and an exception to the rule of
// no global mutable state, taken knowingly: VerifySignature is a plain
// function over bytes (the shape receivers expect, as in stripe-go's
// webhook package), and without somewhere to keep keyed states it would
// re-key and allocate on every call, doubling its cost at 1 KiB. The
// exception is safe because the cache is invisible in results: bounded
// (macCacheSize secrets; each entry's sync.Pool is emptied by the GC),
// safe for concurrent use (immutable maps behind an atomic pointer,
// writers serialised; a pooled state is held by one goroutine at a time),
// keyed by the exact secret (no cross-talk), and the only timing it adds
// depends on whether a secret is cached, never on the header or payload
// compared. Code that wants no shared state uses NewWebhookHandler.
var sharedMACs macCache

func (c *macCache) get(secret string) *keyedMAC {
	if m := c.m.Load(); m != nil {
		if k, ok := (*m)[secret]; ok {
			return k
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if k, ok := (*old)[secret]; ok {
			return k
		}
	}
	next := make(map[string]*keyedMAC, macCacheSize)
	if old != nil && len(*old) < macCacheSize {
		for s, k := range *old {
			next[s] = k
		}
	}
	k := newKeyedMAC(secret)
	next[secret] = k
	c.m.Store(&next)
	return k
}

// verifier checks signatures against a fixed list of secrets with its own
// keyed states; the webhook handler holds one, so it shares nothing with
// other handlers.
type verifier struct {
	keys []*keyedMAC
	bad  bool // no secret, or an empty one
}

func newVerifier(secrets []string) *verifier {
	v := &verifier{bad: len(secrets) == 0}
	for _, s := range secrets {
		if s == "" {
			v.bad = true
			continue
		}
		v.keys = append(v.keys, newKeyedMAC(s))
	}
	return v
}

// decode is the first half of VerifySignature for v's secrets, which needs
// no payload: it checks that v has secrets and that header is well formed,
// and returns the MAC header carries. The handler calls it before reading
// a body.
func (v *verifier) decode(header string) ([sha256.Size]byte, error) {
	if v.bad {
		return [sha256.Size]byte{}, ErrNoSecret
	}
	return decodeSignature(header)
}

// verifyMAC is the second half: whether one of v's secrets gives want for
// payload.
func (v *verifier) verifyMAC(payload []byte, want *[sha256.Size]byte) error {
	for _, k := range v.keys {
		if k.verify(payload, want) {
			return nil
		}
	}
	return ErrSignatureMismatch
}

// ConstructEvent verifies the signature header of payload with
// [VerifySignature], only then parses it with [ParseEvent] (bytes that fail
// verification are never parsed), and refuses an event outside the replay
// window, as the handler made by [NewWebhookHandler] does by default: older
// than [DefaultReplayWindow] or more than [DefaultFutureSkew] in the
// future, on this machine's clock. Without that check a captured delivery
// could be replayed to the receiver forever. A signature error matches
// [ErrInvalidSignature]; a parse error matches [ErrMalformedEvent]; an
// event outside the window, [ErrOutsideReplayWindow].
//
// ConstructEvent does not deduplicate: inside the window the same event
// may be delivered again (every retry, every webhook), and a receiver
// handles it once by its ID (see [Deduper]). [ConstructEventWithOptions]
// changes the window or its clock.
func ConstructEvent(payload []byte, header string, secrets ...string) (*Event, error) {
	return constructEvent(payload, header, secrets, constructConfig{past: DefaultReplayWindow, future: DefaultFutureSkew, now: time.Now})
}

// ConstructEventWithOptions is [ConstructEvent] with options: the replay
// window ([WithEventReplayWindow]) and its clock ([WithEventClock]).
// secrets are the secrets that verify, as for ConstructEvent. An option
// given a value it cannot use is an error wrapping [ErrInvalidArgument],
// returned before the payload is looked at.
func ConstructEventWithOptions(payload []byte, header string, secrets []string, opts ...ConstructEventOption) (*Event, error) {
	cfg := constructConfig{past: DefaultReplayWindow, future: DefaultFutureSkew, now: time.Now}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return constructEvent(payload, header, secrets, cfg)
}

func constructEvent(payload []byte, header string, secrets []string, cfg constructConfig) (*Event, error) {
	if err := VerifySignature(payload, header, secrets...); err != nil {
		return nil, err
	}
	ev, err := ParseEvent(payload)
	if err != nil {
		return nil, err
	}
	if err := checkReplayWindow(ev, cfg.now(), cfg.past, cfg.future); err != nil {
		return nil, err
	}
	return ev, nil
}
