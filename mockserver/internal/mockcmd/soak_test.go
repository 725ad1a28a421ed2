package mockcmd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	soakDuration = flag.Duration("soak", 0, "how long BenchmarkSoak loads the command (60s, 10m…); 0 skips it")
	soakBinary   = flag.String("soak-bin", "", "BenchmarkSoak: a contextsvc-mock binary to soak instead of building this one (to measure another build)")
	soakWorkers  = flag.Int("soak-workers", 16, "BenchmarkSoak: concurrent clients")
	soakStatus   = flag.Int("soak-receiver-status", http.StatusNoContent, "BenchmarkSoak: the status the webhook receiver answers (500: every delivery fails and waits for its retries)")
)

// BenchmarkSoak runs the command as a separate process (so the resident
// memory sampled is the server's alone) with an unlimited key, and loads
// it at full speed for -soak: each of -soak-workers clients creates a
// context, updates it, exports it (the five formats in turn), lists a
// page and deletes it, again and again, while two webhooks subscribed to
// every event type get their deliveries from it on a loopback receiver
// (answering -soak-receiver-status). Each POST carries a fresh
// Idempotency-Key, as the SDK's do, so the idempotency store fills as it
// would under the SDK. Every second it samples the server's VmRSS. It reports requests per
// second, the slowest request, and the peak RSS of the second window
// against that of the last, a window being a sixth of the run, at most a
// minute (so a 10-minute run compares the second minute with the last).
//
//	go test ./internal/mockcmd -run '^$' -bench Soak -benchtime 1x -soak 60s
func BenchmarkSoak(b *testing.B) {
	if *soakDuration <= 0 {
		b.Skip("set -soak to a duration (60s, 10m) to run the soak")
	}
	bin := *soakBinary
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "contextsvc-mock")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/contextsvc/contextsvc-go/mockserver/cmd/contextsvc-mock").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
		w.WriteHeader(*soakStatus)
	}))
	defer receiver.Close()

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-key", "soak:unlimited", "-log-level", "warn")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	base, key := readReady(b, stdout)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	tr := &http.Transport{MaxIdleConns: 2 * *soakWorkers, MaxIdleConnsPerHost: 2 * *soakWorkers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	call := func(method, path, body string) (int, []byte, time.Duration, error) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if method == http.MethodPost {
			req.Header.Set("Idempotency-Key", rand.Text())
		}
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, time.Since(start), err
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, out, time.Since(start), err
	}
	for i := range 2 {
		body := fmt.Sprintf(`{"url":%q,"events":["context.created","context.updated","context.deleted","context.published",`+
			`"context.version.created","team.member.added","team.member.removed","export.completed"],"secret":"whsec_soak_%d"}`, receiver.URL+"/hook", i)
		if code, out, _, err := call("POST", "/webhooks", body); err != nil || code != http.StatusCreated {
			b.Fatalf("register webhook: %d %s %v", code, out, err)
		}
	}

	const content = "# Overview\n\nA runbook for the soak test, with *emphasis*, a [link](https://example.com) and `code`.\n\n" +
		"## Steps\n\n1. Create it.\n2. Update it.\n3. Export it.\n\n- one\n- two\n  - nested\n\n> A quote.\n\n```go\nfmt.Println(\"hi\")\n```\n"
	formats := []string{"markdown", "html", "text", "json", "pdf"}
	ctx, stop := context.WithTimeout(context.Background(), *soakDuration)
	defer stop()
	start := time.Now() // reset when the load starts
	var (
		requests, failures atomic.Int64
		maxLatency         atomic.Int64
		overSecond         atomic.Int64 // requests slower than 1 s (the goal: none)
		slowestMu          sync.Mutex
		slowest            string // the slowest request's kind and when it ended
		firstFailure       sync.Once
		failure            string
	)
	track := func(what string, code, want int, d time.Duration, err error, out []byte) bool {
		requests.Add(1)
		if d > time.Second {
			overSecond.Add(1)
		}
		for {
			m := maxLatency.Load()
			if int64(d) <= m {
				break
			}
			if maxLatency.CompareAndSwap(m, int64(d)) {
				slowestMu.Lock()
				if int64(d) == maxLatency.Load() {
					slowest = fmt.Sprintf("%s, %s, ended %s into the run", what, d.Round(time.Millisecond), time.Since(start).Round(time.Second))
				}
				slowestMu.Unlock()
				break
			}
		}
		if err != nil || code != want {
			if ctx.Err() != nil {
				return false // the run ended under this request
			}
			failures.Add(1)
			firstFailure.Do(func() { failure = fmt.Sprintf("%s: %d %.200s %v", what, code, out, err) })
			return false
		}
		return true
	}

	// The server's resident memory, every second.
	type sample struct {
		at  time.Duration
		rss int64 // bytes
	}
	var samples []sample
	sampled := make(chan struct{})
	start = time.Now()
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if rss, err := readRSS(cmd.Process.Pid); err == nil {
				samples = append(samples, sample{time.Since(start), rss})
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range *soakWorkers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				code, out, d, err := call("POST", "/contexts", fmt.Sprintf(`{"name":"Soak %d-%d","content":%q,"tags":["soak","w%d"]}`, w, i, content, w))
				if !track("create", code, http.StatusCreated, d, err, out) {
					continue
				}
				var c struct{ ID string }
				_ = json.Unmarshal(out, &c)
				code, out, d, err = call("PUT", "/contexts/"+c.ID, fmt.Sprintf(`{"content":%q}`, content+"\nMore words in version two.\n"))
				track("update", code, http.StatusOK, d, err, out)
				code, out, d, err = call("GET", "/contexts/"+c.ID+"/export?format="+formats[i%len(formats)], "")
				track("export", code, http.StatusOK, d, err, out)
				code, out, d, err = call("GET", "/contexts?limit=20&tag=w"+strconv.Itoa(w), "")
				track("list", code, http.StatusOK, d, err, out)
				code, out, d, err = call("DELETE", "/contexts/"+c.ID, "")
				track("delete", code, http.StatusOK, d, err, out)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	<-sampled
	b.StopTimer()

	// Windows of a sixth of the run, at most a minute.
	window := min(time.Minute, elapsed/6)
	peak := func(from, to time.Duration) int64 {
		var p int64
		for _, s := range samples {
			if s.at >= from && s.at < to && s.rss > p {
				p = s.rss
			}
		}
		return p
	}
	second, last := peak(window, 2*window), peak(elapsed-window, elapsed+time.Second)
	var trace strings.Builder
	for i, s := range samples {
		if i%max(1, len(samples)/30) == 0 || i == len(samples)-1 {
			fmt.Fprintf(&trace, " %s:%.0f", s.at.Round(time.Second), float64(s.rss)/(1<<20))
		}
	}
	b.Logf("RSS MiB over time:%s", trace.String())
	b.Logf("window %s; deliveries received %d; slowest request: %s; %d of %d requests over 1 s",
		window, received.Load(), slowest, overSecond.Load(), requests.Load())
	const mib = 1 << 20
	b.ReportMetric(float64(requests.Load())/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(received.Load())/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(maxLatency.Load())/1e6, "max-latency-ms")
	b.ReportMetric(float64(second)/mib, "rss-2nd-window-MiB")
	b.ReportMetric(float64(last)/mib, "rss-last-window-MiB")
	b.ReportMetric(float64(last)/float64(second), "rss-last/2nd")
	if n := failures.Load(); n > 0 {
		b.Errorf("%d requests failed; the first: %s", n, failure)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Errorf("the command: %v\n%s", err, stderr.String())
	}
}

// readRSS returns the resident memory of process pid (Linux).
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
