package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// listing says how a list command shows its items: a table for people, or
// the ids alone, one a line (quiet).
type listing[T any] struct {
	noun   string                        // "contexts", for the words about more pages
	empty  string                        // printed when there is no item; "" prints the header alone
	header []string                      // the table's header
	row    func(t *table, x *T) []string // an item's cells, made for t
	id     func(*T) string               // an item's id, for quiet
	quiet  bool
}

// listPages shows a list for list-style commands: its first page, or with
// all every page through the SDK's iterator, so that a list that would
// never end (a cursor cycle, endless empty pages) ends with
// contextsvc.ErrPaginationLoop here as it does in a program. page reads the
// first page; every iterates over all of them; both take the request
// options given.
//
// Every page is shown as it comes, before the next is asked for, so the
// command holds at most one page whatever the list's length (a list whose
// pages never end is shown until interrupted): with asJSON each page's
// answer as it came, once the SDK accepted it (with all, one a line: JSON
// Lines; --jq runs on each); quiet, each id; else the table's rows of each
// page (see table). Without all, stderr says after the table when
// more pages follow.
func listPages[T any](ctx context.Context, s *streams, l listing[T], all bool, asJSON *jsonOutput,
	page func(opts ...contextsvc.RequestOption) (items []*T, hasMore bool, next string, err error),
	every func(opts ...contextsvc.RequestOption) iter.Seq2[*T, error],
) error {
	if asJSON.enabled() {
		return listJSON(ctx, s, all, asJSON, page, every)
	}
	out := &itemWriter[T]{s: s, l: l, table: newTable(s, l.header...)}
	if !all {
		items, more, next, err := page()
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := out.add(it); err != nil {
				return err
			}
		}
		if more {
			defer noteMore(s, moreFollow(l.noun, next))
		}
		return out.end()
	}
	// Before each page is asked for, the rows of the one before are
	// written.
	flushing := contextsvc.WithRequestMiddleware(contextsvc.Middleware{
		Call: func(ctx context.Context, call *contextsvc.Call, next contextsvc.CallNext) (*http.Response, error) {
			if err := out.table.flush(); err != nil {
				return nil, err
			}
			return next(ctx)
		},
	})
	for it, err := range every(flushing) {
		if err != nil {
			// The items given before the error were accepted.
			return errors.Join(out.table.flush(), err)
		}
		if err := out.add(it); err != nil {
			return err
		}
	}
	return out.end()
}

// moreFollow is the line that says more pages of a list follow, and how
// to see them.
func moreFollow(noun, next string) string {
	return fmt.Sprintf("More %s follow: --all lists every page, --cursor %s the next.", noun, cell(next, 200))
}

// itemWriter shows a list's items as listing says.
type itemWriter[T any] struct {
	s     *streams
	l     listing[T]
	table *table
	n     int
}

func (w *itemWriter[T]) add(it *T) error {
	w.n++
	if w.l.quiet {
		_, err := fmt.Fprintln(w.s.out, w.s.plainID(w.l.id(it)))
		return err
	}
	w.table.add(w.l.row(w.table, it)...)
	return nil
}

// end writes what is held, or the words for an empty list.
func (w *itemWriter[T]) end() error {
	switch {
	case w.l.quiet:
		return nil
	case w.n == 0 && w.l.empty != "":
		_, err := fmt.Fprintln(w.s.out, w.l.empty)
		return err
	}
	return w.table.finish()
}

// listJSON writes the first page's answer as it came, or with all each
// page's in turn.
func listJSON[T any](ctx context.Context, s *streams, all bool, asJSON *jsonOutput,
	page func(opts ...contextsvc.RequestOption) ([]*T, bool, string, error),
	every func(opts ...contextsvc.RequestOption) iter.Seq2[*T, error],
) error {
	if !all {
		var raw rawBody
		if _, _, _, err := page(raw.option()); err != nil {
			return err
		}
		return asJSON.write(ctx, s.out, raw.bytes())
	}
	pages := &pageWriter{w: s.out, ctx: ctx, j: asJSON}
	for _, err := range every(pages.option()) {
		if err != nil {
			// The page read last was accepted when only the cursor it
			// gave is at fault; any other error is that page's own.
			if errors.Is(err, contextsvc.ErrPaginationLoop) {
				err = errors.Join(pages.flush(), err)
			}
			return err
		}
	}
	return pages.flush()
}

// pageWriter writes each page an SDK iterator reads, as it came, once the
// iterator has accepted it: when it asks for the next page, or when
// flushed after the last. A page the SDK refuses (an error answer, a
// malformed list) is never written. Each page is written on one line (a
// page that came on several is compacted), so that the pages are JSON
// Lines.
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
	body := p.raw.bytes()
	if bytes.ContainsAny(bytes.TrimSpace(body), "\r\n") {
		var line bytes.Buffer
		if json.Compact(&line, body) == nil {
			body = line.Bytes()
		}
	}
	return p.j.write(p.ctx, p.w, body)
}
