package contextsvc

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// githubVector is the test vector GitHub publishes for X-Hub-Signature-256,
// which uses the same construction ("sha256=" + lowercase hex
// HMAC-SHA256 of the body): "Validating webhook deliveries", section
// "Testing the webhook payload validation",
// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
// The value was also checked independently with
//
//	printf 'Hello, World!' | openssl dgst -sha256 -hmac "It's a Secret to Everybody"
var githubVector = struct {
	secret, payload, header string
}{
	secret:  "It's a Secret to Everybody",
	payload: "Hello, World!",
	header:  "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
}

func TestSignPublishedVector(t *testing.T) {
	t.Parallel()
	if got := Sign([]byte(githubVector.payload), githubVector.secret); got != githubVector.header {
		t.Errorf("Sign = %q, want GitHub's published %q", got, githubVector.header)
	}
	if err := VerifySignature([]byte(githubVector.payload), githubVector.header, githubVector.secret); err != nil {
		t.Errorf("VerifySignature(published vector) = %v, want nil", err)
	}
}

// TestSignMatchesIndependentHMAC checks Sign against a computation written
// from the definition HMAC = H((K^opad) || H((K^ipad) || m)) with only
// crypto/sha256, not crypto/hmac, including a key longer than a block
// (which HMAC hashes first).
func TestSignMatchesIndependentHMAC(t *testing.T) {
	t.Parallel()
	manual := func(key, msg []byte) string {
		if len(key) > 64 {
			s := sha256.Sum256(key)
			key = s[:]
		}
		var ipad, opad [64]byte
		copy(ipad[:], key)
		copy(opad[:], key)
		for i := range ipad {
			ipad[i] ^= 0x36
			opad[i] ^= 0x5c
		}
		inner := sha256.Sum256(append(ipad[:], msg...))
		outer := sha256.Sum256(append(opad[:], inner[:]...))
		return "sha256=" + hex.EncodeToString(outer[:])
	}
	cases := []struct{ name, secret, payload string }{
		{"short", "s", `{"id":"evt_1"}`},
		{"empty payload", "secret", ""},
		{"block-size key", strings.Repeat("k", 64), "hello"},
		{"long key", strings.Repeat("long-key-", 20), strings.Repeat("x", 5000)},
		{"binary", "\x00\xff", "\x00\x01\x02"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := manual([]byte(tc.secret), []byte(tc.payload))
			if got := Sign([]byte(tc.payload), tc.secret); got != want {
				t.Errorf("Sign = %q, want %q", got, want)
			}
			if err := VerifySignature([]byte(tc.payload), want, tc.secret); err != nil {
				t.Errorf("VerifySignature = %v, want nil", err)
			}
		})
	}
}

func TestVerifySignatureBadHeaders(t *testing.T) {
	t.Parallel()
	const secret = "whsec_test"
	payload := []byte(`{"id":"evt_1","type":"context.created"}`)
	good := Sign(payload, secret)
	// oneOff changes the last hex digit to another valid lowercase digit.
	last := good[len(good)-1]
	repl := byte('0')
	if last == '0' {
		repl = '1'
	}
	oneOff := good[:len(good)-1] + string(repl)
	sha1Header := "sha1=" + good[len(SignaturePrefix):len(SignaturePrefix)+40]

	// want is the exported error to match; reason is the exact value
	// returned, so a header refused for the wrong reason (and so with a
	// misleading message) fails too.
	cases := []struct {
		name   string
		header string
		want   error
		reason error
	}{
		{"empty", "", ErrMissingSignature, ErrMissingSignature},
		{"no prefix", good[len(SignaturePrefix):], ErrMalformedSignature, errNoPrefix},
		{"sha1 prefix", sha1Header, ErrMalformedSignature, errNoPrefix},
		{"prefix only", "sha256=", ErrMalformedSignature, errBadLength},
		{"odd length", good[:len(good)-1], ErrMalformedSignature, errBadLength},
		{"too long", good + "0", ErrMalformedSignature, errBadLength},
		{"non-hex", good[:len(good)-1] + "g", ErrMalformedSignature, errNotHex},
		{"uppercase prefix", "SHA256=" + good[len(SignaturePrefix):], ErrMalformedSignature, errNoPrefix},
		{"leading space", " " + good, ErrMalformedSignature, errNoPrefix},
		{"one character off", oneOff, ErrSignatureMismatch, ErrSignatureMismatch},
		{"right signature for another body", Sign([]byte(`{"id":"evt_2"}`), secret), ErrSignatureMismatch, ErrSignatureMismatch},
		{"right signature with another secret", Sign(payload, "whsec_other"), ErrSignatureMismatch, ErrSignatureMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := VerifySignature(payload, tc.header, secret)
			if !errors.Is(err, tc.want) {
				t.Fatalf("VerifySignature(%q) = %v, want %v", tc.header, err, tc.want)
			}
			if err != tc.reason {
				t.Errorf("VerifySignature(%q) = %q, want %q", tc.header, err, tc.reason)
			}
			if !errors.Is(err, ErrInvalidSignature) {
				t.Errorf("error %v does not match ErrInvalidSignature", err)
			}
			if _, cerr := ConstructEvent(payload, tc.header, secret); !errors.Is(cerr, tc.want) {
				t.Errorf("ConstructEvent error = %v, want %v", cerr, tc.want)
			}
			msg := err.Error()
			if strings.Contains(msg, secret) || strings.Contains(msg, good[len(SignaturePrefix):]) {
				t.Errorf("error %q reveals the secret or the expected signature", msg)
			}
		})
	}
}

func TestVerifySignatureUppercaseHexRefused(t *testing.T) {
	t.Parallel()
	payload := []byte("x")
	good := Sign(payload, "k")
	upper := SignaturePrefix + strings.ToUpper(good[len(SignaturePrefix):])
	if upper == good {
		t.Skip("signature has no letters")
	}
	if err := VerifySignature(payload, upper, "k"); !errors.Is(err, ErrMalformedSignature) {
		t.Errorf("uppercase hex: err = %v, want ErrMalformedSignature", err)
	}
}

func TestVerifySignatureSecrets(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"id":"evt_rot"}`)
	cases := []struct {
		name    string
		signer  string
		secrets []string
		want    error
	}{
		{"single", "new", []string{"new"}, nil},
		{"rotation: old secret still accepted", "old", []string{"new", "old"}, nil},
		{"rotation: new secret accepted", "new", []string{"new", "old"}, nil},
		{"retired secret refused", "old", []string{"new"}, ErrSignatureMismatch},
		{"no secrets", "new", nil, ErrNoSecret},
		{"only empty secret", "", []string{""}, ErrNoSecret},
		{"empty among secrets", "new", []string{"new", ""}, ErrNoSecret},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := VerifySignature(payload, Sign(payload, tc.signer), tc.secrets...)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err != nil && !errors.Is(err, ErrInvalidSignature) {
				t.Errorf("%v does not match ErrInvalidSignature", err)
			}
		})
	}
}

func TestSignatureErrorsAreDistinct(t *testing.T) {
	t.Parallel()
	all := []error{ErrMissingSignature, ErrMalformedSignature, ErrSignatureMismatch, ErrNoSecret}
	for i, a := range all {
		if !errors.Is(a, ErrInvalidSignature) {
			t.Errorf("%v does not match ErrInvalidSignature", a)
		}
		for j, b := range all {
			if i != j && errors.Is(a, b) {
				t.Errorf("%v matches %v", a, b)
			}
		}
	}
	if errors.Is(ErrInvalidSignature, ErrMalformedEvent) || errors.Is(ErrMalformedEvent, ErrInvalidSignature) {
		t.Error("signature and event errors overlap")
	}
}

// TestVerifySignatureConcurrent shares the cached keyed states across
// goroutines and secrets; run it with -race.
func TestVerifySignatureConcurrent(t *testing.T) {
	t.Parallel()
	secrets := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				s := secrets[(g+i)%len(secrets)]
				p := []byte(strings.Repeat("p", i))
				if err := VerifySignature(p, Sign(p, s), secrets...); err != nil {
					t.Errorf("valid signature refused: %v", err)
					return
				}
				other := secrets[(g+i+1)%len(secrets)]
				if err := VerifySignature(p, Sign(p, s), other); !errors.Is(err, ErrSignatureMismatch) {
					t.Errorf("signature of %q accepted for %q: %v", s, other, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestMACCacheBounded uses more secrets than the cache holds, and checks
// that it stays bounded and every answer stays right.
func TestMACCacheBounded(t *testing.T) {
	t.Parallel()
	var c macCache
	p := []byte("payload")
	for i := range 3 * macCacheSize {
		s := strings.Repeat("s", i+1)
		want, _ := decodeSignature(Sign(p, s))
		if !c.get(s).verify(p, &want) {
			t.Fatalf("secret %d: valid MAC refused", i)
		}
		if n := len(*c.m.Load()); n > macCacheSize {
			t.Fatalf("cache holds %d entries, bound is %d", n, macCacheSize)
		}
	}
}

// TestMACCacheChurnConcurrent: goroutines using more secrets than the
// cache holds make it start over again and again while others read it;
// every answer stays right (the right secret verifies, a neighbour's
// signature does not) and the bound holds. Run it with -race.
func TestMACCacheChurnConcurrent(t *testing.T) {
	t.Parallel()
	var c macCache
	p := []byte("payload")
	const n = 2*macCacheSize + 1
	secrets := make([]string, n)
	wants := make([][sha256.Size]byte, n)
	for i := range secrets {
		secrets[i] = fmt.Sprintf("secret-%03d", i)
		wants[i], _ = decodeSignature(Sign(p, secrets[i]))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 3 * n {
				j := (g*17 + i) % n
				if !c.get(secrets[j]).verify(p, &wants[j]) {
					t.Errorf("secret %d: valid MAC refused", j)
					return
				}
				if c.get(secrets[j]).verify(p, &wants[(j+1)%n]) {
					t.Errorf("secret %d: the MAC of secret %d accepted", j, (j+1)%n)
					return
				}
				if m := c.m.Load(); len(*m) > macCacheSize {
					t.Errorf("cache holds %d entries, bound is %d", len(*m), macCacheSize)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestVerifySignatureAllocationFree(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	p := []byte(strings.Repeat("z", 1024))
	h := Sign(p, "alloc-secret")
	_ = VerifySignature(p, h, "alloc-secret") // warm up
	allocs := testing.AllocsPerRun(200, func() {
		if err := VerifySignature(p, h, "alloc-secret"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("VerifySignature allocates %v times per call when warm, want 0", allocs)
	}
	allocs = testing.AllocsPerRun(200, func() { _ = VerifySignature(p, "sha256=00", "alloc-secret") })
	if allocs != 0 {
		t.Errorf("a refused header allocates %v times, want 0", allocs)
	}
}

// The keyed path must agree with a fresh crypto/hmac for each call.
func TestKeyedMACMatchesHMAC(t *testing.T) {
	t.Parallel()
	k := newKeyedMAC("key")
	for i := range 50 {
		p := []byte(strings.Repeat("q", i*37))
		m := hmac.New(sha256.New, []byte("key"))
		m.Write(p)
		var want [sha256.Size]byte
		copy(want[:], m.Sum(nil))
		if !k.verify(p, &want) {
			t.Fatalf("len %d: keyed MAC disagrees with crypto/hmac", len(p))
		}
		want[0] ^= 1
		if k.verify(p, &want) {
			t.Fatalf("len %d: flipped MAC accepted", len(p))
		}
	}
}
