// Package deliverytest holds what the tests of the delivery engine and of
// the server's deliveries share: a webhook receiver on loopback that checks
// every request is a delivery as the contract describes it, correctly
// signed, and records it ([NewReceiver]), and a log buffer a logger and a
// test may share ([LogBuffer]). Only tests import it.
package deliverytest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Hit is one request a receiver got.
type Hit struct {
	Header http.Header
	Body   []byte
	At     time.Time // on the engine's clock
}

// Receiver is a webhook receiver on loopback. It checks that every request
// is a well-formed, correctly signed delivery, records it, and answers with
// respond.
type Receiver struct {
	*httptest.Server
	mu   sync.Mutex
	hits []Hit
}

// NewReceiver starts a receiver of deliveries signed with secret, which
// stamps each request with clock's time, answers it with respond, and is
// closed when the test ends.
func NewReceiver(t *testing.T, clock interface{ Now() time.Time }, secret string, respond func(w http.ResponseWriter, r *http.Request, h Hit)) *Receiver {
	t.Helper()
	rc := &Receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("receiver: reading body: %v", err)
		}
		CheckRequest(t, r, body, secret)
		h := Hit{Header: r.Header.Clone(), Body: body, At: clock.Now()}
		rc.mu.Lock()
		rc.hits = append(rc.hits, h)
		rc.mu.Unlock()
		respond(w, r, h)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// Got returns the requests received so far, in order.
func (rc *Receiver) Got() []Hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Hit(nil), rc.hits...)
}

// Signature computes the contract's signature independently of the SDK.
func Signature(body []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// CheckRequest fails the test unless r is a delivery as the contract
// describes it, signed with secret.
func CheckRequest(t *testing.T, r *http.Request, body []byte, secret string) {
	t.Helper()
	if r.Method != http.MethodPost {
		t.Errorf("method %s, want POST", r.Method)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
	sig := r.Header.Get("X-Service-Signature")
	if want := Signature(body, secret); !hmac.Equal([]byte(sig), []byte(want)) {
		t.Errorf("X-Service-Signature %q, want %q", sig, want)
	}
	if want := contextsvc.Sign(body, secret); sig != want {
		t.Errorf("X-Service-Signature %q, contextsvc.Sign gives %q", sig, want)
	}
	et := contextsvc.EventType(r.Header.Get("X-Service-Event"))
	if !et.Known() {
		t.Errorf("X-Service-Event %q is no known event type", et)
	}
	// What a receiver using the SDK does: verify, then parse.
	if err := contextsvc.VerifySignature(body, sig, secret); err != nil {
		t.Errorf("contextsvc.VerifySignature: %v", err)
	}
	if err := contextsvc.VerifySignature(body, sig, secret+"-other"); !errors.Is(err, contextsvc.ErrInvalidSignature) {
		t.Errorf("contextsvc.VerifySignature with another secret: %v", err)
	}
	// Any age: the engine's clock may be fake, and a delivery redelivered
	// by hand may be older than a receiver's replay window.
	ev, err := contextsvc.ConstructEventWithOptions(body, sig, []string{"old-secret", secret}, contextsvc.WithEventReplayWindow(0, 0))
	if err != nil {
		t.Errorf("contextsvc.ConstructEvent: %v\n%s", err, body)
	} else {
		if ev.Type != et || !strings.HasPrefix(ev.ID, "evt_") || ev.Timestamp.IsZero() {
			t.Errorf("constructed event %+v, header type %s", ev, et)
		}
		if _, err := ev.ParseData(); err != nil {
			t.Errorf("ParseData: %v", err)
		}
	}
	if id := r.Header.Get("X-Service-Delivery"); !strings.HasPrefix(id, "dlv_") || len(id) < len("dlv_")+20 {
		t.Errorf("X-Service-Delivery %q, want dlv_ and at least 20 characters", id)
	}
	if n, err := strconv.Atoi(r.Header.Get("X-Service-Delivery-Attempt")); err != nil || n < 1 {
		t.Errorf("X-Service-Delivery-Attempt %q, want a number from 1", r.Header.Get("X-Service-Delivery-Attempt"))
	}
	if r.Header.Get("User-Agent") == "" {
		t.Error("no User-Agent")
	}
}

// AttemptNumber is the attempt number a request carries.
func AttemptNumber(h Hit) int {
	n, _ := strconv.Atoi(h.Header.Get("X-Service-Delivery-Attempt"))
	return n
}

// LogBuffer is a bytes.Buffer safe for a logger and a reader.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *LogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written.
func (s *LogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
