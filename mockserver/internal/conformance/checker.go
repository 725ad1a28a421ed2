package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// checker runs one check: it sends the check's requests and records what
// differs from the contract.
type checker struct {
	r   *runner
	res *Check
	ctx context.Context
}

// send sends rq. It returns nil when no answer came (recorded as a
// difference, unless the run is being stopped).
func (c *checker) send(rq request) *contract.Exchange {
	ex, err := c.r.send.do(c.ctx, rq)
	c.res.Requests++
	if err != nil {
		if c.ctx.Err() == nil {
			op := c.r.spec.Operation(rq.method, contract.APIPath(c.r.base.Path, c.r.base.Path+pathOnly(rq.path)))
			c.add(&Difference{Kind: KindNoAnswer, Operation: opLabel(op, rq.method), Summary: "no answer",
				Request: rq.show(c.r.base.Path), Contract: "an HTTP answer", Got: err.Error(),
				judge: behaviour("the SDK's call fails with this transport error (retried for GET, PUT, DELETE and POST)")})
		}
		return nil
	}
	return ex
}

func pathOnly(p string) string {
	q, _, _ := strings.Cut(p, "?")
	return q
}

// opLabel names an operation in the report: its id, or the method and
// "off the API" for a path or method the API does not serve.
func opLabel(op, method string) string {
	if op == "" {
		return method + " off the API"
	}
	return op
}

func (c *checker) add(d *Difference) { c.res.Differences = append(c.res.Differences, d) }

// aggregated are the headers checked across the whole run by their own
// checks, not answer by answer.
var aggregated = append([]string{contract.HeaderRequestID}, contract.RateLimitHeaders()...)

// answer holds ex to the contract's status want and to the document. It
// records a status that differs, or how the answer breaks the document,
// and reports whether the answer can be read as the contract's (the status
// is right, or a 2xx with a body where the contract says another 2xx, and
// the document holds). contractSays describes the contract's answer for
// the report, after its status ("with the Context").
func (c *checker) answer(ex *contract.Exchange, want int, contractSays string, expect contract.Expect) bool {
	if ex == nil {
		return false
	}
	expect.Status = want
	op := c.r.spec.Operation(ex.Method, ex.Path)
	contractText := fmt.Sprintf("%d %s", want, contractSays)
	opts := contract.CheckOptions{SkipHeaders: aggregated}
	if ex.Status != want {
		c.add(&Difference{Kind: KindStatus, Operation: opLabel(op, ex.Method), Summary: fmt.Sprintf("%d where the contract answers %d", ex.Status, want),
			Request: c.shown(ex), Contract: contractText, Got: shownAnswer(ex), judge: replay(op, ex, expect)})
		if !is2xx(ex.Status) || !is2xx(want) || len(ex.Body) == 0 {
			return false
		}
		opts.AsStatus = want
	}
	if ms := c.r.spec.CheckResponse(ex, opts); len(ms) > 0 {
		c.add(&Difference{Kind: KindDocument, Operation: opLabel(op, ex.Method), Summary: mismatchSummary(ms),
			Request: c.shown(ex), Contract: contractText + " as openapi.yaml states it", Got: shownAnswer(ex), Document: ms,
			judge: replay(op, ex, expect)})
		return false
	}
	return true
}

// mismatchSummary says how an answer breaks the document, without values
// (kin-openapi's reasons never quote them) or array indexes, so that the
// same break reads the same in every answer.
func mismatchSummary(ms []contract.Mismatch) string {
	parts := make([]string, 0, len(ms))
	seen := map[string]bool{}
	for _, m := range ms {
		s := indexes.ReplaceAllString(m.Where, "/*") + ": " + m.Message
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// done reports whether the server did what was asked: it answered 2xx,
// in whatever form.
func done(ex *contract.Exchange) bool { return ex != nil && is2xx(ex.Status) }

var indexes = regexp.MustCompile(`/[0-9]+`)

func is2xx(s int) bool { return s >= 200 && s <= 299 }

// errorBody is the contract's error body.
type errorBody struct {
	Error struct {
		Type      string `json:"type"`
		Message   string `json:"message"`
		Param     string `json:"param"`
		RequestID string `json:"requestId"`
	} `json:"error"`
}

// errorAnswer holds ex to the contract's error: status, the document's
// Error body, its type and (when the contract names one) its param.
func (c *checker) errorAnswer(ex *contract.Exchange, want int, typ, param string) bool {
	says := typ
	if param != "" {
		says += fmt.Sprintf(` with param "%s"`, param)
	}
	expect := contract.Expect{Type: typ, Param: param}
	if !c.answer(ex, want, says, expect) {
		return false
	}
	var e errorBody
	if err := json.Unmarshal(ex.Body, &e); err != nil {
		c.value(ex, "the error body is not JSON", "an error body", err.Error())
		return false
	}
	ok := true
	op := opLabel(c.r.spec.Operation(ex.Method, ex.Path), ex.Method)
	if e.Error.Type != typ {
		c.value(ex, fmt.Sprintf("%s: error type %q instead of %q", op, e.Error.Type, typ), fmt.Sprintf("%d %s", want, typ), shownAnswer(ex))
		ok = false
	}
	if param != "" && e.Error.Param != param {
		c.value(ex, fmt.Sprintf("%s: the %d names param %q instead of %q", op, want, e.Error.Param, param),
			fmt.Sprintf(`%d %s with param "%s"`, want, typ, param), shownAnswer(ex))
		ok = false
	}
	return ok
}

// value records a well-formed answer that says something else than the
// contract: a difference of behaviour, which the SDK passes on to its
// caller as it is. summary may start with the operation ("getContext: …"),
// which then goes to the difference's Operation.
func (c *checker) value(ex *contract.Exchange, summary, contractSays, got string) {
	d := &Difference{Kind: KindValue, Summary: summary, Contract: contractSays, Got: got}
	if ex != nil {
		d.Request = c.shown(ex)
		d.Operation = opLabel(c.r.spec.Operation(ex.Method, ex.Path), ex.Method)
		d.Summary = strings.TrimPrefix(summary, d.Operation+": ")
	}
	d.judge = behaviour("the SDK passes the server's answer on as it is: code that relies on the mock's behaviour here sees the difference")
	c.add(d)
}

// note records a difference that no single answer shows (a delivery that
// never came, a count over several answers).
func (c *checker) note(kind, summary, contractSays, got, sdk string) {
	c.add(&Difference{Kind: kind, Summary: summary, Contract: contractSays, Got: got, judge: behaviour(sdk)})
}

// shown is the request of an exchange as the report shows it.
func (c *checker) shown(ex *contract.Exchange) string {
	s := ex.Method + " " + ex.Target()
	if k := ex.RequestHeader.Get(contract.HeaderIdempotencyKey); k != "" {
		s += " (Idempotency-Key " + k + ")"
	}
	if len(ex.RequestBody) > 0 {
		s += " " + excerpt(ex.RequestBody, 300)
		if n, _ := strconv.Atoi(ex.RequestHeader.Get("Content-Length")); n > len(ex.RequestBody) {
			s += fmt.Sprintf(" (%d bytes sent)", n)
		}
	}
	return s
}

// replay judges a difference by replaying the answer through the SDK.
func replay(op string, ex *contract.Exchange, expect contract.Expect) func() contract.Verdict {
	return func() contract.Verdict {
		return contract.Judge(ex, contract.ReadAnswer(op, ex), expect)
	}
}

// behaviour is the verdict on a difference of behaviour, which no decoding
// can undo.
func behaviour(why string) func() contract.Verdict {
	return func() contract.Verdict { return contract.Verdict{Tolerated: false, SDK: why} }
}

// skip marks the check skipped, saying why.
func (c *checker) skip(why string) {
	c.res.Status = Skipped
	c.res.Note = why
}

// decode reads a JSON body the document has already accepted.
func decode[T any](ex *contract.Exchange) (T, bool) {
	var v T
	err := json.Unmarshal(ex.Body, &v)
	return v, err == nil
}

// jsonBytes encodes v without escaping HTML characters (a URL's "&" stays
// as it is).
func jsonBytes(v any) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}
