package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// ServeHTTP takes a delivery: it refuses what no delivery is, then
// forwards it to the app and answers with the app's answer, or without an
// app answers 200; either way it prints the delivery's line.
func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "contextsvc listen takes webhook deliveries (POST) only", http.StatusMethodNotAllowed)
		return
	}
	d := delivery{Time: time.Now(), DeliveryID: r.Header.Get("X-Service-Delivery"), EventType: r.Header.Get("X-Service-Event")}
	d.Attempt, _ = strconv.Atoi(r.Header.Get("X-Service-Delivery-Attempt"))
	// A refused request's line comes before its answer, so that whoever
	// sent it finds the line printed once answered.
	refuse := func(status int, why string) {
		d.Status, d.Error = status, why
		l.line(d, nil)
		http.Error(w, "contextsvc listen: "+why, status)
	}
	switch {
	case crossOrigin.Check(r) != nil:
		refuse(http.StatusForbidden, "refused: a browser's request from a page of another site")
		return
	case !jsonBody(r.Header.Get("Content-Type")):
		refuse(http.StatusUnsupportedMediaType, "refused: a body that is not JSON, as every delivery's is")
		return
	case cameRound(r.Header, l.id):
		refuse(http.StatusLoopDetected, "refused: the request came round to this receiver again (--forward-to leads back to it)")
		return
	}
	select {
	case l.inFlight <- struct{}{}:
		defer func() { <-l.inFlight }()
	default:
		// The sender retries; meanwhile nothing piles up here.
		w.Header().Set("Retry-After", "5")
		refuse(http.StatusServiceUnavailable, "busy: "+strconv.Itoa(cap(l.inFlight))+" deliveries in hand already")
		return
	}

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDeliveryBody))
	if err != nil {
		status := http.StatusBadRequest
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			status = http.StatusRequestEntityTooLarge
		}
		refuse(status, "reading the delivery: "+err.Error())
		return
	}
	d.Verified = contextsvc.VerifySignature(body, r.Header.Get(contextsvc.DefaultSignatureHeader), l.secret) == nil
	var env struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &env) == nil {
		d.EventID = env.ID
		if env.Type != "" {
			d.EventType = env.Type
		}
	}
	if !d.Verified && !l.forwardUnverified {
		d.Status = http.StatusUnauthorized
		d.Error = "not forwarded: the signature does not verify with the secret"
		if l.target != nil {
			d.Error += " (--forward-unverified forwards it)"
		}
		l.line(d, body)
		http.Error(w, "contextsvc listen: the signature does not verify", d.Status)
		return
	}
	var seen *seenEvent
	if d.Verified {
		// Only the service's deliveries count: a forged id must not make
		// a real one look like a duplicate.
		d.Duplicate, seen = l.seen.begin(d.EventID)
	}
	if l.target == nil {
		d.Status = http.StatusOK
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(d.Status)
		io.WriteString(w, `{"received":true}`)
		d.DurationMS = ms(time.Since(d.Time))
	} else {
		l.forward(w, r, body, &d)
	}
	l.seen.end(seen, d.Status >= 200 && d.Status <= 299)
	l.line(d, body)
}

// forward sends the delivery to the app and its answer back to the
// sender.
func (l *listener) forward(w http.ResponseWriter, r *http.Request, body []byte, d *delivery) {
	d.Forwarded = true
	start := time.Now()
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, l.target.String(), bytes.NewReader(body))
	if err != nil {
		d.Status, d.Error = http.StatusBadGateway, err.Error()
		http.Error(w, d.Error, d.Status)
		return
	}
	req.Header = forwardHeaders(r.Header, l.forwardUnverified, l.id)
	resp, err := l.forwarder.Do(req)
	d.DurationMS = ms(time.Since(start))
	if err != nil {
		d.Status = http.StatusBadGateway
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		d.Error = "the app did not answer: " + err.Error()
		http.Error(w, "contextsvc listen: "+d.Error, d.Status)
		return
	}
	defer resp.Body.Close()
	for _, h := range answerHeaders {
		if vs := resp.Header.Values(h); len(vs) > 0 {
			w.Header()[h] = append([]string(nil), vs...)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, io.LimitReader(resp.Body, maxAnswer))
	d.Status, d.DurationMS = resp.StatusCode, ms(time.Since(start))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
