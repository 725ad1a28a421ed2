package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// listPages reads a list for list-style commands: its first page, or with
// all every page through the SDK's iterator, so that a list that would
// never end (a cursor cycle, endless empty pages) ends with
// contextsvc.ErrPaginationLoop here as it does in a program. With asJSON
// each page's answer is written as it came, once accepted, and no items
// are returned; otherwise the items are returned for a table, with the
// line that says when more pages follow (for stderr, after the table).
// page reads the first page; every iterates over all of them; both take
// the request options given.
func listPages[T any](ctx context.Context, s *streams, noun string, all bool, asJSON *jsonOutput,
	page func(opts ...contextsvc.RequestOption) (items []*T, hasMore bool, next string, err error),
	every func(opts ...contextsvc.RequestOption) iter.Seq2[*T, error],
) (items []*T, moreNote string, err error) {
	if !all {
		var raw rawBody
		items, more, next, err := page(raw.option())
		switch {
		case err != nil:
			return nil, "", err
		case asJSON.enabled():
			return nil, "", asJSON.write(ctx, s.out, raw.bytes())
		case more:
			moreNote = moreFollow(noun, next)
		}
		return items, moreNote, nil
	}
	if !asJSON.enabled() {
		var shown []*T
		for it, err := range every() {
			if err != nil {
				return nil, "", err
			}
			shown = append(shown, it)
		}
		return shown, "", nil
	}
	pages := &pageWriter{w: s.out, ctx: ctx, j: asJSON}
	for _, err := range every(pages.option()) {
		if err != nil {
			// The page read last was accepted when only the cursor it
			// gave is at fault; any other error is that page's own.
			if errors.Is(err, contextsvc.ErrPaginationLoop) {
				err = errors.Join(pages.flush(), err)
			}
			return nil, "", err
		}
	}
	return nil, "", pages.flush()
}

// moreFollow is the line that says more pages of a list follow, and how
// to see them.
func moreFollow(noun, next string) string {
	return fmt.Sprintf("More %s follow: --all lists every page, --cursor %s the next.", noun, cell(next, 200))
}

// pageWriter writes each page an SDK iterator reads, as it came, once the
// iterator has accepted it: when it asks for the next page, or when
// flushed after the last. A page the SDK refuses (an error answer, a
// malformed list) is never written.
type pageWriter struct {
	w       io.Writer
	ctx     context.Context
	j       *jsonOutput
	raw     rawBody
	pending bool // raw holds a page not yet written
}

// option is the request option, for every page's call, that writes the
// page before and keeps this call's.
func (p *pageWriter) option() contextsvc.RequestOption {
	return contextsvc.WithRequestMiddleware(contextsvc.Middleware{
		Call: func(ctx context.Context, call *contextsvc.Call, next contextsvc.CallNext) (*http.Response, error) {
			if err := p.flush(); err != nil {
				return nil, err
			}
			resp, err := p.raw.capture(next(ctx))
			p.pending = err == nil
			return resp, err
		},
	})
}

// flush writes the page read last, if not written yet.
func (p *pageWriter) flush() error {
	if !p.pending {
		return nil
	}
	p.pending = false
	return p.j.write(p.ctx, p.w, p.raw.bytes())
}
