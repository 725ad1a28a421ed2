package main

import (
	"context"
	"errors"
	"io"
	"net/http"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// defaultSnapshotMax is snapshot's default --max-size: what the mock takes
// as a state document (PUT /_mock/state), and well under a developer
// machine's memory.
const defaultSnapshotMax = 256 << 20

// errOverBudget ends the read of an answer that takes the bytes read past
// the budget.
var errOverBudget = errors.New("the answers are larger than the limit")

// sizeBudget bounds the bytes of the answers a command reads, over all its
// calls: once they come to more than limit, the answer being read fails
// and exceeded is set. An answer whose Content-Length says it would pass
// the limit is not read at all.
type sizeBudget struct {
	limit    int64
	used     int64
	exceeded bool
}

// option is the request option that counts a call's answer against b.
func (b *sizeBudget) option() contextsvc.RequestOption {
	return contextsvc.WithRequestMiddleware(contextsvc.Middleware{
		Call: func(ctx context.Context, call *contextsvc.Call, next contextsvc.CallNext) (*http.Response, error) {
			resp, err := next(ctx)
			if err != nil || resp == nil || resp.Body == nil {
				return resp, err
			}
			if resp.ContentLength > b.limit-b.used {
				resp.Body.Close()
				b.exceeded = true
				return nil, errOverBudget
			}
			resp.Body = &budgetBody{ReadCloser: resp.Body, b: b}
			return resp, nil
		},
	})
}

// budgetBody counts what is read of an answer's body.
type budgetBody struct {
	io.ReadCloser
	b *sizeBudget
}

func (r *budgetBody) Read(p []byte) (int, error) {
	// At most one byte past the limit is read: enough to tell it passed.
	if left := r.b.limit - r.b.used + 1; int64(len(p)) > left {
		p = p[:max(left, 0)]
	}
	if len(p) == 0 {
		r.b.exceeded = true
		return 0, errOverBudget
	}
	n, err := r.ReadCloser.Read(p)
	r.b.used += int64(n)
	if r.b.used > r.b.limit {
		r.b.exceeded = true
		return n, errOverBudget
	}
	return n, err
}
