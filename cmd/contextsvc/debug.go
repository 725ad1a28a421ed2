package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redact"
)

// envDebug turns --debug on from the environment ("1", "true").
const envDebug = "CONTEXTSVC_DEBUG"

// debugLog writes each request the command sends to stderr, as --debug
// asks: its method and URL, headers, the answer's status, headers and
// time, and each wait before a retry with its reason. Secrets are masked
// by where they are (a URL's user info and secret-named query
// parameters, the value of a header whose name says it holds a
// credential), never by looking for them in text. A nil *debugLog writes
// nothing.
type debugLog struct {
	w  io.Writer
	mu sync.Mutex // one request's lines together
}

// debugEnabled reports whether CONTEXTSVC_DEBUG asks for --debug.
func debugEnabled(getenv func(string) string) bool {
	switch strings.ToLower(getenv(envDebug)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// secretHeader reports whether a header's value is a credential: its
// name says so (Authorization, X-Api-Key, a signature…), or it is a
// cookie.
func secretHeader(name string) bool {
	return redact.SecretParam(name) || strings.EqualFold(name, "Cookie") || strings.EqualFold(name, "Set-Cookie")
}

// maskHeader is a header's value as --debug shows it: a credential's
// scheme alone ("Bearer [redacted]"), any other value made safe for a
// terminal.
func maskHeader(name, value string) string {
	if !secretHeader(name) {
		return cell(value, 300)
	}
	if scheme, _, ok := strings.Cut(value, " "); ok && strings.EqualFold(name, "Authorization") && !strings.ContainsAny(scheme, "=,") {
		return cell(scheme, 20) + " [redacted]"
	}
	return "[redacted]"
}

// debugURL is a request's URL as --debug shows it: its user info and the
// values of its secret-named query parameters masked, the rest as it is
// (a page's limit and cursor help to debug).
func debugURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(redact.Mask)
	}
	c.RawQuery = redact.SecretValues(c.RawQuery, redact.Mask)
	return c.String()
}

// headerLines writes h, names sorted, each line after prefix.
func headerLines(b *strings.Builder, prefix string, h http.Header) {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range h[name] {
			fmt.Fprintf(b, "%s%s: %s\n", prefix, cell(name, 100), maskHeader(name, v))
		}
	}
}

// attempt writes one request and its outcome: the answer (resp, read or
// not) or the error that ended it.
func (d *debugLog) attempt(req *http.Request, resp *http.Response, took time.Duration, err error) {
	d.attemptN(req, 0, resp, took, err)
}

// attemptN is attempt with the number of the attempt in its call (0 when
// it is not counted).
func (d *debugLog) attemptN(req *http.Request, n int, resp *http.Response, took time.Duration, err error) {
	if d == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "* %s %s", req.Method, cell(debugURL(req.URL), 2000))
	if n > 0 {
		fmt.Fprintf(&b, " (attempt %d)", n)
	}
	b.WriteString("\n")
	headerLines(&b, "> ", req.Header)
	switch {
	case resp != nil:
		fmt.Fprintf(&b, "< %d %s in %s\n", resp.StatusCode, http.StatusText(resp.StatusCode), took.Round(10*time.Microsecond))
		headerLines(&b, "< ", resp.Header)
	case err != nil:
		fmt.Fprintf(&b, "! no answer after %s: %s\n", took.Round(10*time.Microsecond), cell(describeError(err), 500))
	}
	d.write(b.String())
}

func (d *debugLog) write(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	io.WriteString(d.w, text)
}

// debugCall is what --debug keeps of a call between its attempts: the
// last answer's status and Retry-After, to say why the call waits.
type debugCall struct {
	status     int
	retryAfter string
	err        bool
}

type debugCallKey struct{}

// middleware is the SDK's hook that writes each attempt of every call
// and the waits between them.
func (d *debugLog) middleware() contextsvc.Middleware {
	return contextsvc.Middleware{
		Call: func(ctx context.Context, call *contextsvc.Call, next contextsvc.CallNext) (*http.Response, error) {
			return next(context.WithValue(ctx, debugCallKey{}, &debugCall{}))
		},
		Attempt: func(req *http.Request, attempt *contextsvc.Attempt, next contextsvc.AttemptNext) (*http.Response, error) {
			start := time.Now()
			resp, err := next(req)
			d.attemptN(req, attempt.Number, resp, time.Since(start), err)
			if dc, ok := req.Context().Value(debugCallKey{}).(*debugCall); ok {
				*dc = debugCall{err: err != nil}
				if resp != nil {
					dc.status, dc.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
				}
			}
			return resp, err
		},
		Wait: func(ctx context.Context, w *contextsvc.Wait) {
			d.write(waitLine(ctx, w))
		},
	}
}

// waitLine says how long a call waited before an attempt, and why.
func waitLine(ctx context.Context, w *contextsvc.Wait) string {
	why := "the client's pacing to the plan (--plan)"
	if w.Reason == contextsvc.WaitRetry {
		why = "a retry"
		if dc, ok := ctx.Value(debugCallKey{}).(*debugCall); ok {
			switch {
			case dc.err:
				why = "a retry after a request that got no answer (exponential back-off)"
			case dc.status == http.StatusTooManyRequests && dc.retryAfter != "":
				why = "a retry after 429 Too Many Requests, as its Retry-After (" + cell(dc.retryAfter, 40) + ") asked"
			case dc.status == http.StatusTooManyRequests:
				why = "a retry after 429 Too Many Requests (exponential back-off: no Retry-After)"
			case dc.status >= 500 && dc.retryAfter != "":
				why = fmt.Sprintf("a retry after %d %s, as its Retry-After (%s) asked", dc.status, http.StatusText(dc.status), cell(dc.retryAfter, 40))
			case dc.status >= 500:
				why = fmt.Sprintf("a retry after %d %s (exponential back-off)", dc.status, http.StatusText(dc.status))
			}
		}
	}
	line := fmt.Sprintf("* waited %s before attempt %d: %s", w.Duration.Round(time.Millisecond), w.Attempt, why)
	if w.Err != nil {
		line += " (cut short: " + cell(w.Err.Error(), 200) + ")"
	}
	return line + "\n"
}
