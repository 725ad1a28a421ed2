package browsertest

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// BenchmarkLaunch: what a test binary pays once, Launch until the
// browser answers (start-ms) and Close until it and its directory are
// gone (close-ms), beside the same program run with --version (exec of
// Debian's wrapper script and the binary, no browser), the machine's
// floor for starting it at all.
func BenchmarkLaunch(b *testing.B) {
	Require(b)
	path, _ := Installed()
	b.Run("version", func(b *testing.B) {
		for b.Loop() {
			if out, err := exec.Command(path, "--version").CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
	b.Run("launch", func(b *testing.B) {
		var start, stop time.Duration
		for b.Loop() {
			t0 := time.Now()
			br, err := Launch()
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := br.Close(); err != nil {
				b.Fatal(err)
			}
			start += t1.Sub(t0)
			stop += time.Since(t1)
		}
		b.ReportMetric(float64(start.Milliseconds())/float64(b.N), "start-ms")
		b.ReportMetric(float64(stop.Milliseconds())/float64(b.N), "close-ms")
	})
}

// BenchmarkTab: what each test pays, a tab of its own (New: browser
// context, tab, console recording; closed at the end) around a load of a
// small page and a console check, beside the load and check alone in a
// tab that stays open. The difference is the per-test overhead. The
// navigate sub-benchmark also reports the page's first contentful paint.
func BenchmarkTab(b *testing.B) {
	br := Shared(b)
	srv := pageServer(b, map[string]string{"page": `<h1>Deliveries</h1><p>Nothing failed.</p>`})
	url := srv.URL + "/page"
	load := func(b *testing.B, ctx context.Context) {
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			b.Fatal(err)
		}
		if msgs, err := Messages(ctx); err != nil || len(msgs) != 0 {
			b.Fatalf("console %v, %v", msgs, err)
		}
	}
	b.Run("navigate", func(b *testing.B) {
		ctx, cancel, err := br.NewTab()
		if err != nil {
			b.Fatal(err)
		}
		defer cancel()
		var fcp time.Duration
		for b.Loop() {
			load(b, ctx)
			tm, err := chromedp.Run(ctx, PageTiming())
			if err != nil {
				b.Fatal(err)
			}
			fcp += tm.FirstContentfulPaint
		}
		b.ReportMetric(float64(fcp.Microseconds())/1000/float64(b.N), "fcp-ms")
	})
	b.Run("new-tab", func(b *testing.B) {
		var open, closing time.Duration
		for b.Loop() {
			t0 := time.Now()
			ctx, cancel, err := br.NewTab()
			if err != nil {
				b.Fatal(err)
			}
			open += time.Since(t0)
			load(b, ctx)
			t1 := time.Now()
			cancel()
			closing += time.Since(t1)
		}
		b.ReportMetric(float64(open.Microseconds())/1000/float64(b.N), "open-ms")
		b.ReportMetric(float64(closing.Microseconds())/1000/float64(b.N), "close-ms")
	})
}
