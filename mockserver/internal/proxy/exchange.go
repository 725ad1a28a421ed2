package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/redact"
)

// recording passes a body on as it is read, and keeps its first
// MaxValidatedBody bytes. done, when set, is called once: when the body
// ends (complete) or is closed before its end. The transport may still
// read a request's body after its answer has ended (an upstream that
// answers before reading it all), even after the handler returned: reads
// hold the lock, and once detached the body reads no more, so nothing
// touches the caller's body once the proxy is done with it.
type recording struct {
	rc       io.ReadCloser
	mu       sync.Mutex
	buf      bytes.Buffer
	overflow bool // more than MaxValidatedBody came
	eof      bool
	detached bool
	done     func(complete bool)
	once     sync.Once
}

// errDetached ends a request body read after the proxy has answered.
var errDetached = errors.New("proxy: the request was answered before its body was sent")

func (b *recording) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.detached {
		b.mu.Unlock()
		return 0, errDetached
	}
	n, err := b.rc.Read(p)
	if n > 0 && !b.overflow {
		if b.buf.Len()+n > MaxValidatedBody {
			b.overflow = true
			b.buf = bytes.Buffer{} // let it go: it will not be read
		} else {
			b.buf.Write(p[:n])
		}
	}
	if err == io.EOF {
		b.eof = true
	}
	b.mu.Unlock()
	if err == io.EOF {
		b.end(true)
	}
	return n, err
}

func (b *recording) Close() error {
	err := b.rc.Close()
	b.mu.Lock()
	eof := b.eof
	b.mu.Unlock()
	b.end(eof)
	return err
}

// detach makes the body read no more (waiting for a read under way).
func (b *recording) detach() {
	b.mu.Lock()
	b.detached = true
	b.mu.Unlock()
}

// state returns what was kept of the body (a copy), whether more than
// MaxValidatedBody came, and whether it was read to its end.
func (b *recording) state() (body []byte, overflow, eof bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes()), b.overflow, b.eof
}

func (b *recording) end(complete bool) {
	if b.done != nil {
		b.once.Do(func() { b.done(complete) })
	}
}

// exchange is one request forwarded and its answer.
type exchange struct {
	p                      *Proxy
	method, path, rawQuery string
	header                 http.Header
	requestID              string // the server's, for its own 502 and 504
	reqBody                *recording
	status                 int
	respHeader             http.Header
	respBody               *recording

	// caller is the caller's request's context; ctx is the forwarded
	// request's, canceled (cancel) with a *limitError as its cause when
	// the upstream passes a time limit. begun is the time-out on the
	// answer's beginning, stopped once it has begun.
	caller context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	begun  *time.Timer
}

// limit returns the time limit the upstream passed, or nil.
func (ex *exchange) limit() *limitError {
	le, _ := context.Cause(ex.ctx).(*limitError)
	return le
}

// snapshot is what the exchange's bodies hold once its answer has ended.
type snapshot struct {
	reqBody, respBody   []byte
	reqOverflow, reqEOF bool
	respOverflow        bool
}

func (ex *exchange) snapshot() snapshot {
	sn := snapshot{reqEOF: true}
	if ex.reqBody != nil {
		sn.reqBody, sn.reqOverflow, sn.reqEOF = ex.reqBody.state()
	}
	if ex.respBody != nil {
		sn.respBody, sn.respOverflow, _ = ex.respBody.state()
	}
	return sn
}

// requestComplete reports whether the request's body (if any) was read
// to its end within the bound, and says why not.
func (sn *snapshot) requestComplete() (bool, string) {
	switch {
	case sn.reqOverflow:
		return false, "the request's body is over " + sizeText(MaxValidatedBody) + ": forwarded unvalidated"
	case !sn.reqEOF:
		return false, "the upstream answered before reading the request's whole body: the request is not validated"
	}
	return true, ""
}

// record is the exchange as contract checks it: the request's headers
// without Authorization (nor cookies), its body and the answer's as
// buffered.
func (ex *exchange) record(sn *snapshot) *contract.Exchange {
	h := ex.header.Clone()
	h.Del("Authorization")
	h.Del("Cookie")
	h.Del("Proxy-Authorization")
	return &contract.Exchange{Method: ex.method, Path: ex.path, RawQuery: ex.rawQuery, RequestHeader: h,
		RequestBody: sn.reqBody, Status: ex.status, Header: ex.respHeader, Body: sn.respBody}
}

// finish holds the exchange to the document once the answer's body has
// ended (complete) or was closed before its end.
func (ex *exchange) finish(complete bool) {
	p := ex.p
	sn := ex.snapshot()
	rec := ex.record(&sn)
	op := p.c.Spec.Operation(ex.method, ex.path)
	f := &Finding{Method: ex.method, Operation: label(op), Status: ex.status, RequestID: ex.respHeader.Get(contract.HeaderRequestID)}
	var why []string
	refused := false
	if ok, reason := sn.requestComplete(); ok {
		if ms := p.c.Spec.CheckRequest(rec); len(ms) > 0 {
			if ex.status >= 400 && ex.status <= 499 {
				// The upstream refused it, as the contract says it must.
				refused = true
			} else {
				f.Request = ms
			}
		}
	} else if sn.reqOverflow || ex.status < 400 || ex.status > 499 {
		// A body the upstream refused before reading it all (a 413) is
		// the contract at work; one it acted on, or one over the bound,
		// went unchecked.
		why = append(why, reason)
	}
	switch {
	case sn.respOverflow:
		why = append(why, "the answer's body is over "+sizeText(MaxValidatedBody)+": forwarded unvalidated")
	case !complete && ex.limit() != nil:
		why = append(why, ex.limit().Error()+": the answer was cut short, and is not validated")
	case !complete:
		why = append(why, "the answer was cut short (the caller or the upstream went away): it is not validated")
	default:
		f.Answer = append(p.c.Spec.CheckResponse(rec, contract.CheckOptions{}), missingRateLimit(p.c.Spec, rec)...)
		if len(f.Answer) > 0 {
			v := contract.Judge(rec, contract.ReadAnswer(op, rec), expect(op, rec, f.Answer))
			f.SDK = &v
		}
	}
	f.Unvalidated = strings.Join(why, "; ")
	if len(f.Request) == 0 && len(f.Answer) == 0 && f.Unvalidated == "" {
		p.c.Log.record(f.Operation, nil, false, refused)
		return
	}
	p.keep(ex, &sn, f, false, refused)
}

// upstreamFailed records a request the upstream did not answer (status
// 502), or not in time (504).
func (ex *exchange) upstreamFailed(status int, msg string) {
	f := &Finding{Method: ex.method, Operation: label(ex.p.c.Spec.Operation(ex.method, ex.path)), Status: status,
		Unvalidated: msg}
	sn := ex.snapshot()
	ex.p.keep(ex, &sn, f, true, false)
}

// keep masks the secrets of the exchange in f (secrets.go), logs it and
// keeps it.
func (p *Proxy) keep(ex *exchange, sn *snapshot, f *Finding, upstreamFailed, refused bool) {
	f.Time = jsonwire.FormatTime(p.c.Now())
	f.Target = maskTarget(ex.path, ex.rawQuery)
	f.Request, f.Dropped = capMismatches(f.Request, 0)
	f.Answer, f.Dropped = capMismatches(f.Answer, f.Dropped)
	s := exchangeSecrets(ex.header, ex.rawQuery, sn.reqBody, sn.respBody)
	for _, ms := range [][]contract.Mismatch{f.Request, f.Answer} {
		for i := range ms {
			ms[i] = maskMismatch(ms[i])
			ms[i].Message = cut(s.maskQuoted(ms[i].Message))
		}
	}
	if f.SDK != nil {
		f.SDK.SDK = cut(s.maskQuoted(f.SDK.SDK))
	}
	if s[f.RequestID] {
		f.RequestID = redact.Mask
	}
	kept := p.c.Log.record(f.Operation, f, upstreamFailed, refused)
	p.logFinding(kept, upstreamFailed || ex.limit() != nil)
	if p.c.OnFinding != nil {
		p.c.OnFinding(kept)
	}
}

// logFinding logs each mismatch (Warn) and why the exchange was not
// validated (Info; Warn for an upstream that failed or passed a time
// limit), secrets masked.
func (p *Proxy) logFinding(f *Finding, failed bool) {
	ctx := context.Background()
	base := []slog.Attr{slog.String("finding", f.ID), slog.String("operation", f.Operation), slog.String("method", f.Method),
		slog.String("target", f.Target), slog.Int("status", f.Status)}
	for side, ms := range map[string][]contract.Mismatch{"request": f.Request, "answer": f.Answer} {
		for _, mm := range ms {
			attrs := append(append([]slog.Attr(nil), base...), slog.String("side", side), slog.String("where", mm.Where),
				slog.String("rule", mm.Rule), slog.String("message", mm.Message))
			if side == "answer" && f.SDK != nil {
				attrs = append(attrs, slog.Bool("sdkTolerates", f.SDK.Tolerated))
			}
			p.c.Logger.LogAttrs(ctx, slog.LevelWarn, "contract mismatch", attrs...)
		}
	}
	if f.Unvalidated != "" {
		level := slog.LevelInfo
		if failed {
			level = slog.LevelWarn
		}
		p.c.Logger.LogAttrs(ctx, level, "contract not checked", append(base, slog.String("why", f.Unvalidated))...)
	}
}

// expect is what the contract's answer would have been, as far as one
// answer shows it: the operation's success status for a success of
// another status, more pages for a list page as long as the limit asked,
// and the headers when a mismatch is in them.
func expect(op string, ex *contract.Exchange, ms []contract.Mismatch) contract.Expect {
	var e contract.Expect
	for _, o := range contract.Operations() {
		if o.ID == op && ex.Status >= 200 && ex.Status <= 299 && ex.Status != o.Success {
			e.Status = o.Success
		}
	}
	if op == contract.OpListContexts || op == contract.OpListVersions {
		q, _ := url.ParseQuery(ex.RawQuery)
		limit, err := strconv.Atoi(q.Get("limit"))
		if err != nil {
			limit = contract.DefaultListLimit
		}
		var items []json.RawMessage
		if json.Unmarshal(ex.Body, &items) == nil && len(items) == limit {
			e.MorePages = true
		}
	}
	for _, m := range ms {
		if strings.HasPrefix(m.Where, "header ") {
			e.Headers = true
		}
	}
	return e
}

// missingRateLimit lists the rate-limit headers an answer lacks where the
// document puts them (every authenticated answer): the document cannot
// mark them required, since the mock's unlimited plan sends none, but
// every plan of the service has a rate limit.
func missingRateLimit(spec *contract.Spec, ex *contract.Exchange) []contract.Mismatch {
	var out []contract.Mismatch
	for _, h := range contract.RateLimitHeaders() {
		if ex.Header.Get(h) == "" && spec.Declares(ex, h) {
			out = append(out, contract.Mismatch{Where: "header " + h, Rule: "#/components/headers/" + h,
				Message: "missing: every authenticated answer carries it (every plan of the service has a rate limit)"})
		}
	}
	return out
}

// label is the operation as the findings and counts name it.
func label(op string) string {
	if op == "" {
		return OffAPI
	}
	return op
}

// capMismatches keeps at most MaxMismatches of ms, adding the others to
// dropped.
func capMismatches(ms []contract.Mismatch, dropped int) ([]contract.Mismatch, int) {
	if len(ms) > MaxMismatches {
		return ms[:MaxMismatches:MaxMismatches], dropped + len(ms) - MaxMismatches
	}
	return ms, dropped
}

// cut shortens a message to MaxMessage bytes (on a rune boundary).
func cut(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	i := MaxMessage
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func sizeText(n int) string { return strconv.Itoa(n>>20) + " MiB" }
