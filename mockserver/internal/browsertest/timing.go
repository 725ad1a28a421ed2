package browsertest

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"
)

// Timing is how long the page took to reach each stage of its load,
// measured from the start of its navigation by the browser's Performance
// API (the same figures DevTools and Lighthouse report).
type Timing struct {
	// FirstPaint is when the browser first painted anything.
	FirstPaint time.Duration
	// FirstContentfulPaint is when it first painted text, an image or a
	// canvas: what a user sees as "the page is there".
	FirstContentfulPaint time.Duration
	// ResponseEnd is when the document's last byte arrived.
	ResponseEnd time.Duration
	// DOMContentLoaded is when the document was parsed and its deferred
	// scripts and DOMContentLoaded handlers had run.
	DOMContentLoaded time.Duration
	// Load is when the load event's handlers had run: every image,
	// style sheet and script the document named had loaded.
	Load time.Duration
}

// timingScript waits for the first contentful paint (a page that never
// paints text waits until the action's context ends) and for the end of
// the load event, then reads the paint and navigation entries.
const timingScript = `(async () => {
	const fcp = await new Promise(resolve => {
		const done = e => resolve(e.startTime);
		const e = performance.getEntriesByName('first-contentful-paint')[0];
		if (e) return done(e);
		new PerformanceObserver((list, obs) => {
			for (const e of list.getEntries()) {
				if (e.name === 'first-contentful-paint') { obs.disconnect(); done(e); }
			}
		}).observe({type: 'paint', buffered: true});
	});
	const nav = () => performance.getEntriesByType('navigation')[0];
	if (!nav() || nav().loadEventEnd === 0) {
		if (document.readyState !== 'complete') {
			await new Promise(r => addEventListener('load', r, {once: true}));
		}
		// loadEventEnd is set once the load handlers have returned.
		while (nav().loadEventEnd === 0) await new Promise(r => setTimeout(r, 0));
	}
	const n = nav(), fp = performance.getEntriesByName('first-paint')[0];
	return {fp: fp ? fp.startTime : fcp, fcp, responseEnd: n.responseEnd,
		dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd};
})()`

// PageTiming is an action that returns the [Timing] of the page loaded in
// the tab. Run it after the navigation, for a benchmark's metric:
//
//	for b.Loop() {
//		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil { b.Fatal(err) }
//		tm, err := chromedp.Run(ctx, browsertest.PageTiming())
//		…
//		fcp += tm.FirstContentfulPaint
//	}
//	b.ReportMetric(float64(fcp.Milliseconds())/float64(b.N), "fcp-ms/op")
func PageTiming() chromedp.Action[Timing] {
	type ms = float64
	type raw struct {
		FP          ms `json:"fp"`
		FCP         ms `json:"fcp"`
		ResponseEnd ms `json:"responseEnd"`
		DCL         ms `json:"dcl"`
		Load        ms `json:"load"`
	}
	return func(ctx context.Context, t *chromedp.Target) (Timing, error) {
		r, err := chromedp.Evaluate[raw](timingScript, chromedp.EvalAwaitPromise)(ctx, t)
		if err != nil {
			return Timing{}, fmt.Errorf("browsertest: reading the page's timing: %w", err)
		}
		d := func(v ms) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
		return Timing{
			FirstPaint:           d(r.FP),
			FirstContentfulPaint: d(r.FCP),
			ResponseEnd:          d(r.ResponseEnd),
			DOMContentLoaded:     d(r.DCL),
			Load:                 d(r.Load),
		}, nil
	}
}
