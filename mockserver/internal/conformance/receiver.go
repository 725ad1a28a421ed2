package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// Bounds of the receiver.
const (
	// maxDeliveryBody is the largest delivery body read: the SDK's
	// handler's limit.
	maxDeliveryBody = contextsvc.DefaultWebhookMaxBodyBytes
	// maxDeliveries and maxDeliveryBytes bound the deliveries kept (the
	// account's other activity reaches the receiver too while the run
	// lasts); past either, deliveries are answered but not kept, and the
	// check that misses one says so.
	maxDeliveries    = 10_000
	maxDeliveryBytes = 64 << 20
)

// delivery is one delivery attempt the receiver got.
type delivery struct {
	at     time.Time // on the run's clock
	header http.Header
	body   []byte
	// answered is the status the receiver gave.
	answered int
	// reading is the SDK's reading of it (ConstructEvent, ParseData).
	reading contract.Reading
	// ev is the verified event, nil when the SDK refused the delivery.
	ev *contextsvc.Event
}

// attempt returns the X-Service-Delivery-Attempt number, 0 when absent.
func (d *delivery) attempt() int {
	n, _ := strconv.Atoi(d.header.Get(contract.HeaderDeliveryAttempt))
	return n
}

// data decodes the verified event's data as a generic object.
func (d *delivery) data() map[string]any {
	if d.ev == nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(d.ev.Data, &m)
	return m
}

// contextID returns the data's contextId, "" when it has none.
func (d *delivery) contextID() string {
	s, _ := d.data()["contextId"].(string)
	return s
}

// receiver is the run's webhook receiver: it verifies each delivery with
// the SDK (ConstructEvent), keeps it, answers 2xx, except the first
// attempt of the context.created delivery of the context named failName,
// which it answers 503 so that the server retries it.
type receiver struct {
	secret   string
	now      func() time.Time
	failName string

	mu         sync.Mutex
	deliveries []*delivery
	bytes      int // of the kept deliveries' bodies
	dropped    int
	failed     *delivery     // the attempt answered 503
	changed    chan struct{} // closed and replaced on every new delivery

	ln  net.Listener
	srv *http.Server
}

// startReceiver listens on addr and serves deliveries until close.
func startReceiver(addr, secret, failName string, now func() time.Time) (*receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &receiver{secret: secret, now: now, failName: failName, changed: make(chan struct{}), ln: ln}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// url is the receiver's own address as a URL; one listening on every
// interface (":9090") is reached on loopback.
func (r *receiver) url() string {
	addr := r.ln.Addr().String()
	if a, ok := r.ln.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port))
	}
	return "http://" + addr + "/"
}

// close stops the receiver at once: the run is over, and a graceful
// Shutdown would wait for connections the server opened without sending on
// them yet.
func (r *receiver) close() { _ = r.srv.Close() }

// ServeHTTP receives one delivery attempt.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxDeliveryBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, "payload too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	d := &delivery{at: r.now(), header: req.Header.Clone(), body: body}
	d.reading = contract.ReadDelivery(body, req.Header, r.secret)
	if dr, ok := d.reading.Value.(*contract.DeliveryReading); ok {
		d.ev = dr.Event
	}
	d.answered = http.StatusOK
	switch {
	case d.reading.Err != nil && errors.Is(d.reading.Err, contextsvc.ErrInvalidSignature):
		d.answered = http.StatusUnauthorized // as the SDK's handler answers
	case d.reading.Err != nil:
		d.answered = http.StatusBadRequest
	}
	r.mu.Lock()
	if d.ev != nil && r.failed == nil && d.ev.Type == contextsvc.EventContextCreated {
		if name, _ := d.data()["name"].(string); name == r.failName && r.failName != "" {
			d.answered = http.StatusServiceUnavailable
			r.failed = d
		}
	}
	if len(r.deliveries) < maxDeliveries && r.bytes+len(body) <= maxDeliveryBytes {
		r.deliveries = append(r.deliveries, d)
		r.bytes += len(body)
	} else {
		r.dropped++
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	w.WriteHeader(d.answered)
}

// snapshot returns the deliveries so far and the failed attempt.
func (r *receiver) snapshot() ([]*delivery, *delivery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*delivery(nil), r.deliveries...), r.failed
}

// wait waits until done says the deliveries so far are enough, at most
// timeout (real time), or ctx ends. It reports whether done said so.
func (r *receiver) wait(ctx context.Context, timeout time.Duration, done func([]*delivery) bool) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		r.mu.Lock()
		ds, changed := append([]*delivery(nil), r.deliveries...), r.changed
		r.mu.Unlock()
		if done(ds) {
			return true
		}
		select {
		case <-changed:
		case <-t.C:
			return done(r.all())
		case <-ctx.Done():
			return false
		}
	}
}

// droppedNote says how many deliveries the receiver did not keep, "" when
// it kept every one.
func (r *receiver) droppedNote() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropped == 0 {
		return ""
	}
	return fmt.Sprintf(" (the receiver kept %d deliveries, its bound, and dropped %d more)", len(r.deliveries), r.dropped)
}

func (r *receiver) all() []*delivery {
	ds, _ := r.snapshot()
	return ds
}
