package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// acrossChecks are the checks over every answer of the run, made once the
// other checks have run.
func (r *runner) acrossChecks() []check {
	return []check{
		{id: "headers.request-id", title: "X-Request-Id req_… on every answer, never repeated, the error body's requestId",
			needs: func(*runner) string { return "" }, run: r.checkRequestIDs},
		{id: "headers.rate-limit", title: "X-RateLimit-Limit, -Remaining and -Reset on every authenticated answer",
			needs: func(r *runner) string {
				if r.cfg.Unlimited {
					return "the key has no rate limit, so its answers carry no X-RateLimit-* headers"
				}
				return ""
			}, run: r.checkRateLimitHeaders},
	}
}

// groups collects one difference per operation and problem over many
// answers, with the first answer that showed it and how many did.
type groups struct {
	r     *runner
	order []string
	by    map[string]*group
}

type group struct {
	op, what      string
	first         *contract.Exchange
	n             int
	contract, got string
	document      []contract.Mismatch
}

func newGroups(r *runner) *groups { return &groups{r: r, by: map[string]*group{}} }

func (g *groups) add(ex *contract.Exchange, what, contractSays, got string, ms []contract.Mismatch) {
	op := opLabel(g.r.spec.Operation(ex.Method, ex.Path), ex.Method)
	key := op + "\x00" + what
	if gr := g.by[key]; gr != nil {
		gr.n++
		return
	}
	g.order = append(g.order, key)
	g.by[key] = &group{op: op, what: what, first: ex, n: 1, contract: contractSays, got: got, document: ms}
}

// report records each group as one difference of the check.
func (g *groups) report(c *checker, total map[string]int) {
	for _, key := range g.order {
		gr := g.by[key]
		op := g.r.spec.Operation(gr.first.Method, gr.first.Path)
		req := c.shown(gr.first)
		if gr.n > 1 || total[gr.op] > 1 {
			req += fmt.Sprintf(" (%d of the %d answers to %s)", gr.n, total[gr.op], gr.op)
		}
		c.add(&Difference{Kind: KindHeader, Operation: gr.op, Summary: gr.what, Request: req, Contract: gr.contract, Got: gr.got,
			Document: gr.document, judge: replay(op, gr.first, contract.Expect{Headers: true})})
	}
}

// totals counts the answers per operation label.
func (r *runner) totals(all []*contract.Exchange) map[string]int {
	out := map[string]int{}
	for _, ex := range all {
		out[opLabel(r.spec.Operation(ex.Method, ex.Path), ex.Method)]++
	}
	return out
}

// checkRequestIDs holds every answer's X-Request-Id to the contract.
func (r *runner) checkRequestIDs(c *checker) {
	all := r.send.all()
	g := newGroups(r)
	seen := map[string]bool{}
	for _, ex := range all {
		vals := ex.Header.Values(contract.HeaderRequestID)
		switch {
		case len(vals) == 0:
			g.add(ex, "no X-Request-Id", "X-Request-Id: req_…", "no X-Request-Id", nil)
			continue
		case len(vals) > 1:
			g.add(ex, "X-Request-Id given more than once", "one X-Request-Id", strings.Join(vals, ", "), nil)
			continue
		}
		id := vals[0]
		if ms := r.spec.CheckHeaderValue(contract.HeaderRequestID, id); len(ms) > 0 {
			g.add(ex, "an X-Request-Id not of the contract's form", "X-Request-Id: req_ and at least 20 random characters", "X-Request-Id: "+id, ms)
		}
		if seen[id] {
			g.add(ex, "an X-Request-Id repeated", "a new X-Request-Id for every answer", "X-Request-Id: "+id+", seen before", nil)
		}
		seen[id] = true
		var e errorBody
		if ex.Status >= 400 && json.Unmarshal(ex.Body, &e) == nil && e.Error.RequestID != "" && e.Error.RequestID != id {
			g.add(ex, "an error body's requestId is not the X-Request-Id", "requestId "+id, "requestId "+e.Error.RequestID, nil)
		}
	}
	if len(all) == 0 {
		c.skip("no answer came to check")
		return
	}
	g.report(c, r.totals(all))
	c.res.Note = plural(len(all), "answer")
}

// checkRateLimitHeaders holds every answer the document gives the
// rate-limit headers (the authenticated ones) to the contract: all three,
// whole numbers, the limit the plan's.
func (r *runner) checkRateLimitHeaders(c *checker) {
	all := r.send.all()
	g := newGroups(r)
	n := 0
	for _, ex := range all {
		if !r.spec.Declares(ex, contract.HeaderRateLimitLimit) {
			continue
		}
		n++
		var missing []string
		for _, h := range contract.RateLimitHeaders() {
			if ex.Header.Get(h) == "" {
				missing = append(missing, h)
			}
		}
		if len(missing) > 0 {
			g.add(ex, "no "+strings.Join(missing, ", "), strings.Join(contract.RateLimitHeaders(), ", ")+" on every authenticated answer", "no "+strings.Join(missing, ", "), nil)
			continue
		}
		for _, h := range contract.RateLimitHeaders() {
			if ms := r.spec.CheckHeaderValue(h, ex.Header.Get(h)); len(ms) > 0 {
				g.add(ex, h+" is not a whole number the contract allows", h+": a whole number", h+": "+ex.Header.Get(h), ms)
			}
		}
		if limit, err := strconv.Atoi(ex.Header.Get(contract.HeaderRateLimitLimit)); err == nil && r.cfg.PerMinute > 0 && limit != r.cfg.PerMinute {
			g.add(ex, "X-RateLimit-Limit is not the plan's", fmt.Sprintf("X-RateLimit-Limit: %d (the plan's requests per minute)", r.cfg.PerMinute),
				"X-RateLimit-Limit: "+strconv.Itoa(limit), nil)
		}
	}
	if n == 0 {
		c.skip("no authenticated answer came to check")
		return
	}
	g.report(c, r.totals(all))
	c.res.Note = plural(n, "authenticated answer")
}

// maxProbes bounds the requests the 429 check sends.
const maxProbes = 500

// checkRateLimited empties the key's bucket with unpaced reads of a
// missing context until the server answers 429, holds that answer to the
// contract, then waits until the bucket is full again.
func (r *runner) checkRateLimited(c *checker) {
	var hit *contract.Exchange
	sent := 0
	for sent < maxProbes && hit == nil {
		ex := c.send(request{method: http.MethodGet, path: "/contexts/" + r.missingID, unpaced: true})
		sent++
		if ex == nil {
			return
		}
		if ex.Status == http.StatusTooManyRequests {
			hit = ex
		}
	}
	if hit == nil {
		c.note(KindMissing, fmt.Sprintf("no 429 within %d unpaced requests", maxProbes), "429 rate_limited once the key's bucket (its plan's burst) is empty",
			fmt.Sprintf("no 429 in %d requests", maxProbes), "the SDK's retries of 429 never run; a client without WithPlan pacing is never slowed")
		return
	}
	if c.errorAnswer(hit, http.StatusTooManyRequests, contract.TypeRateLimited, "") {
		if rem := hit.Header.Get(contract.HeaderRateLimitRemaining); rem != "" && rem != "0" {
			c.value(hit, "getContext: a 429 says requests remain", contract.HeaderRateLimitRemaining+": 0", contract.HeaderRateLimitRemaining+": "+rem)
		}
	}
	wait := time.Minute
	for _, h := range []string{contract.HeaderRateLimitReset, contract.HeaderRetryAfter} {
		if s, err := strconv.Atoi(hit.Header.Get(h)); err == nil && s > 0 {
			wait = time.Duration(s) * time.Second
			break
		}
	}
	r.progress("waiting %s for the key's bucket to fill again", wait)
	_ = r.cfg.Sleep(c.ctx, wait)
	c.res.Note = fmt.Sprintf("429 after %d requests; then waited %s", sent, wait)
}
