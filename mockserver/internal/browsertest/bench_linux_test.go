package browsertest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// BenchmarkMemory: the memory of a browser of its own (every process:
// browser, zygotes, renderers, GPU, network and storage services,
// crashpad) with one tab of a small page open, as a test binary running
// one test at a time has it, and with ten, as the sum of the processes'
// proportional set sizes (shared pages counted once, split among the
// processes sharing them) and of their resident sets (shared pages
// counted in each). One tab is the baseline: each further tab costs a
// ninth of the difference. (Right after Launch the browser is still
// starting its services, so "no tab" is no stable figure.)
func BenchmarkMemory(b *testing.B) {
	Require(b)
	srv := pageServer(b, map[string]string{"page": `<h1>Deliveries</h1><p>Nothing failed.</p>`})
	for _, tabs := range []int{1, 10} {
		b.Run(fmt.Sprintf("tabs=%d", tabs), func(b *testing.B) {
			br, err := Launch()
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			for range tabs {
				ctx, cancel, err := br.NewTab()
				if err != nil {
					b.Fatal(err)
				}
				defer cancel()
				if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/page")); err != nil {
					b.Fatal(err)
				}
			}
			var pss, rss, procs int64
			for b.Loop() {
				pss, rss, procs = 0, 0, 0
				for _, p := range browserProcesses(br.PID(), br.Dir()) {
					ps, rs := memoryOf(p)
					pss, rss, procs = pss+ps, rss+rs, procs+1
				}
			}
			b.ReportMetric(float64(pss)/(1<<20), "pss-MiB")
			b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
			b.ReportMetric(float64(procs), "procs")
		})
	}
}

// memoryOf returns the proportional and resident set sizes of process
// pid, in bytes, from /proc/pid/smaps_rollup; zero if it is gone.
func memoryOf(pid int) (pss, rss int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(string(f[1]), 10, 64)
		switch string(f[0]) {
		case "Pss:":
			pss = kb << 10
		case "Rss:":
			rss = kb << 10
		}
	}
	return pss, rss
}
