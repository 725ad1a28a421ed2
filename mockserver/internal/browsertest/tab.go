package browsertest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// MaxMessages is how many console messages a tab keeps. A page that
// writes more has a bug of its own; [Messages] then says how many it
// dropped, and [NoErrors] fails, since an error may be among them.
const MaxMessages = 10_000

// NewTab opens a tab in a browser context of its own and returns its
// chromedp context, with its console recorded from the start (see
// [Messages]). cancel closes the tab and disposes of its browser context.
// Tests use [New], which does this and cancels at the test's end.
func (b *Browser) NewTab() (ctx context.Context, cancel context.CancelFunc, err error) {
	ctx, cancelTab := chromedp.NewContext(b.allocCtx, chromedp.WithNewBrowserContext())
	// The first Do dials the browser, creates the browser context and the
	// tab and attaches to it. It ties the connection to ctx, so it runs
	// on ctx itself and not on one with a deadline.
	if err := chromedp.Do(ctx); err != nil {
		cancelTab()
		return nil, nil, fmt.Errorf("browsertest: opening a tab: %w", err)
	}
	c := &tabConsole{changed: make(chan struct{}), ended: make(chan struct{})}
	// Subscribe before counting: the count then never runs ahead of what
	// the subscription receives (see wait).
	messages := chromedp.Console(ctx)
	if err := chromedp.Listen(ctx, c.count); err != nil {
		cancelTab()
		return nil, nil, fmt.Errorf("browsertest: listening to the tab: %w", err)
	}
	go c.collect(messages)
	return context.WithValue(ctx, consoleKey{}, c), func() {
		cancelTab()
		<-c.ended
	}, nil
}

type consoleKey struct{}

// tabConsole records a tab's console: calls of the console API, uncaught
// exceptions and unhandled rejections, and the browser's log entries
// (failed resource loads, for one), as chromedp.Console reports them.
//
// A check for "no console error" right after an action must see what the
// action caused, and two things stand between: the page's messages and
// the replies to input commands travel on different channels inside
// chromium (the renderer's DevTools session, the browser's input
// handler), so an exception a click handler throws can reach us after the
// click's reply; and chromedp.Console delivers from a queue on another
// goroutine. So wait first makes a round trip through the page's own
// session (Runtime.evaluate), whose reply comes after every message the
// page has written; count, run by chromedp.Listen in the loop that reads
// the browser's messages, has then counted them all; and wait waits for
// the queue to deliver that many.
type tabConsole struct {
	received atomic.Int64 // console events the browser sent, counted by count

	mu      sync.Mutex
	msgs    []chromedp.ConsoleMessage // the first MaxMessages
	total   int64                     // messages collected, kept or not
	changed chan struct{}             // closed and replaced when total grows
	ended   chan struct{}             // closed when collect returns
	err     error                     // why collect returned, unless the tab closed
}

// count runs in the tab's read loop: it must return at once.
func (c *tabConsole) count(ev any) {
	switch ev.(type) {
	case *runtime.EventConsoleAPICalled, *runtime.EventExceptionThrown, *log.EventEntryAdded:
		c.received.Add(1)
	}
}

// collect stores the messages until the tab's context ends.
func (c *tabConsole) collect(messages iter.Seq2[chromedp.ConsoleMessage, error]) {
	defer close(c.ended)
	for m, err := range messages {
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
			return
		}
		c.mu.Lock()
		if len(c.msgs) < MaxMessages {
			c.msgs = append(c.msgs, m)
		}
		c.total++
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
}

// wait returns the messages once every console event the browser has sent
// so far has been collected, or what there is when ctx ends or collecting
// stopped.
func (c *tabConsole) wait(ctx context.Context) ([]chromedp.ConsoleMessage, error) {
	var errs []error
	if err := ctx.Err(); err != nil {
		return c.snapshot(append(errs, fmt.Errorf("browsertest: reading the console: %w", err)))
	}
	if _, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "0"}); err != nil {
		errs = append(errs, fmt.Errorf("browsertest: reaching the page: %w", err))
	}
	want := c.received.Load()
	for ended := false; ; {
		c.mu.Lock()
		total, changed, collectErr := c.total, c.changed, c.err
		c.mu.Unlock()
		if total >= want {
			return c.snapshot(errs)
		}
		if ended {
			if collectErr == nil {
				collectErr = errors.New("the tab is closed")
			}
			return c.snapshot(append(errs, fmt.Errorf("browsertest: reading the console: %w", collectErr)))
		}
		select {
		case <-changed:
		case <-c.ended:
			ended = true // look once more: the last messages may have come
		case <-ctx.Done():
			return c.snapshot(append(errs, fmt.Errorf("browsertest: reading the console: %w", ctx.Err())))
		}
	}
}

// snapshot returns a copy of the messages, and errs with one more if
// messages were dropped.
func (c *tabConsole) snapshot(errs []error) ([]chromedp.ConsoleMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	msgs := append([]chromedp.ConsoleMessage(nil), c.msgs...)
	if c.total > int64(len(msgs)) {
		errs = append(errs, fmt.Errorf("browsertest: the tab wrote %d console messages; only the first %d are kept", c.total, len(msgs)))
	}
	return msgs, errors.Join(errs...)
}

// Messages returns every console message the tab of ctx (from [New] or
// [Browser.NewTab]) has written so far, oldest first: the calls of the
// console API, uncaught exceptions and unhandled promise rejections, and
// the browser's log entries (a failed resource load, for one). "So far"
// includes every message the browser sent before the reply to the last
// action that returned, so a check right after a click sees what the
// click caused. The error says when ctx is no tab of this package, when
// messages were dropped (see [MaxMessages]) or when the tab is gone.
func Messages(ctx context.Context) ([]chromedp.ConsoleMessage, error) {
	c, ok := ctx.Value(consoleKey{}).(*tabConsole)
	if !ok {
		return nil, errors.New("browsertest: the context is not a tab from browsertest.New or Browser.NewTab")
	}
	return c.wait(ctx)
}

// IsError reports whether m is what a developer's console shows as an
// error: console.error, a failed console.assert, an uncaught exception
// or unhandled promise rejection, or a browser log entry at level error
// (a resource that failed to load, a blocked request).
func IsError(m chromedp.ConsoleMessage) bool {
	switch m.Type {
	case chromedp.ConsoleError, chromedp.ConsoleException, "assert":
		return true
	}
	return false
}

// NoErrors fails tb (without stopping it) for each error ([IsError]) the
// tab of ctx has written so far, saying where it came from, and when the
// console cannot be read completely.
//
// A page that links no icon makes the browser ask for /favicon.ico after
// the load, and a 404 there is a console error, as in a desktop browser's
// console, that comes before or after the check depending on timing: a
// page under test serves an icon, or links an empty one
// (<link rel="icon" href="data:,">).
func NoErrors(tb testing.TB, ctx context.Context) {
	tb.Helper()
	msgs, err := Messages(ctx)
	if err != nil {
		tb.Error(err)
	}
	for _, m := range msgs {
		if IsError(m) {
			tb.Errorf("console %s", Describe(m))
		}
	}
}

// Describe formats m on one line with its origin, as "error
// (http://127.0.0.1:8080/app.js:3:7): text"; the line and column count
// from 1, as editors do.
func Describe(m chromedp.ConsoleMessage) string {
	where := ""
	switch {
	case m.URL != "":
		where = fmt.Sprintf(" (%s:%d:%d)", m.URL, m.Line+1, m.Column+1)
	case m.Source != "":
		where = " (" + m.Source + ")"
	}
	return string(m.Type) + where + ": " + m.Text
}

// logConsole logs the tab's console, for a failed test.
func logConsole(tb testing.TB, ctx context.Context) {
	tb.Helper()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msgs, err := Messages(wctx)
	if len(msgs) == 0 && err == nil {
		tb.Log("browsertest: the tab's console is empty")
		return
	}
	tb.Logf("browsertest: the tab's console (%d messages):", len(msgs))
	for _, m := range msgs {
		tb.Log("  " + Describe(m))
	}
	if err != nil {
		tb.Log("  ", err)
	}
}
