package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contextsvc/contextsvc-go/mockserver"
)

// delivery is what listen says of one delivery.
type delivery struct {
	Time       time.Time `json:"time"`
	EventType  string    `json:"eventType"`
	EventID    string    `json:"eventId"`
	DeliveryID string    `json:"deliveryId"`
	Attempt    int       `json:"attempt"`
	Verified   bool      `json:"signatureVerified"`
	Forwarded  bool      `json:"forwarded"`
	Duplicate  bool      `json:"duplicate"`
	Status     int       `json:"status"`
	DurationMS float64   `json:"durationMs"`
	Error      string    `json:"error,omitempty"`
}

// retryNote is when the service tries a failed delivery again, by the
// contract's schedule (mockserver.DefaultRetrySchedule): after the k-th
// failed attempt, the k-th delay; after the last, none.
type retryNote struct {
	In   time.Duration // 0: no retry
	Next int           // the attempt that comes then
	Last bool          // the failed attempt was the last
}

// retryOf tells when a delivery answered with d.Status is tried again, if
// it failed and says which attempt it was.
func retryOf(d delivery) (retryNote, bool) {
	if d.Attempt < 1 || (d.Status >= 200 && d.Status <= 299) {
		return retryNote{}, false
	}
	schedule := mockserver.DefaultRetrySchedule()
	if d.Attempt > len(schedule) {
		return retryNote{Last: true}, true
	}
	return retryNote{In: schedule[d.Attempt-1], Next: d.Attempt + 1}, true
}

// Widths of a delivery line's columns: the longest event type and event
// id, "attempt N", the signature's words, a status and its text.
const (
	colType      = len("context.version.created")
	colEventID   = len("evt_") + 24
	colAttempt   = len("attempt 1")
	colSignature = len("signature NOT verified")
	colStatus    = len("503 Service Unavailable")
	colDuration  = len("999.9ms")
)

// line prints a delivery's line, and with --print-json its body (nil when
// it was not read).
func (l *listener) line(d delivery, body []byte) {
	retry, failed := retryOf(d)
	if l.asJSON {
		out := struct {
			Kind string `json:"kind"`
			delivery
			RetryInSeconds int64           `json:"retryInSeconds,omitempty"`
			LastAttempt    bool            `json:"lastAttempt,omitempty"`
			Body           json.RawMessage `json:"body,omitempty"`
		}{Kind: "delivery", delivery: d, RetryInSeconds: int64(retry.In / time.Second), LastAttempt: retry.Last}
		if l.showBody && json.Valid(body) {
			out.Body = body
		}
		l.printJSON(out)
		return
	}
	var b strings.Builder
	column := func(text string, width int, style string) {
		b.WriteString(l.color.style(style, text))
		b.WriteString(strings.Repeat(" ", max(width-utf8.RuneCountInString(text), 0)+2))
	}
	column(d.Time.Format("2006-01-02 15:04:05"), 0, "")
	column(cmp.Or(cell(d.EventType, 60), "-"), colType, "")
	column(cmp.Or(cell(d.EventID, 80), "-"), colEventID, "")
	column("attempt "+cmp.Or(attemptText(d.Attempt), "-"), colAttempt, "")
	switch {
	case d.Verified:
		column("signature verified", colSignature, styleGreen)
	case body == nil:
		column("signature not checked", colSignature, styleYel)
	default:
		column("signature NOT verified", colSignature, styleRed)
	}
	column(fmt.Sprintf("%d %s", d.Status, http.StatusText(d.Status)), colStatus, statusStyle(d.Status))
	var notes []string
	if d.Duplicate {
		notes = append(notes, l.color.style(styleYel, "duplicate")+": its event was taken already")
	}
	if d.Error != "" {
		notes = append(notes, cell(d.Error, 300))
	}
	switch {
	case failed && retry.Last:
		notes = append(notes, "that was the last attempt: the delivery is failed (it can be redelivered by hand)")
	case failed:
		notes = append(notes, fmt.Sprintf("the service tries again in %s (attempt %d)", shortDuration(retry.In), retry.Next))
	}
	took := time.Duration(d.DurationMS * float64(time.Millisecond)).Round(100 * time.Microsecond).String()
	if len(notes) == 0 {
		b.WriteString(took)
	} else {
		column(took, colDuration, "")
		b.WriteString(strings.Join(notes, "; "))
	}
	text := b.String()
	text += "\n"
	if l.showBody && body != nil {
		text += bodyForTerminal(body, l.s.outTTY) + "\n"
	}
	// One write: the line and its body stay together.
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.s.out, text)
}

// attemptText is an attempt's number, or "" for none.
func attemptText(n int) string {
	if n < 1 {
		return ""
	}
	return strconv.Itoa(n)
}

// bodyForTerminal is a delivery's body as --print-json shows it: JSON
// indented, and on a terminal without what would drive it.
func bodyForTerminal(body []byte, tty bool) string {
	var out bytes.Buffer
	text := string(body)
	if json.Indent(&out, body, "", "  ") == nil {
		text = out.String()
	}
	text = strings.TrimRight(text, "\n")
	if tty {
		text = safeText(text)
	}
	return text
}

// shortDuration writes a retry's delay as the contract does: 1m, 5m,
// 30m, 2h, 24h.
func shortDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d >= time.Minute && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}
