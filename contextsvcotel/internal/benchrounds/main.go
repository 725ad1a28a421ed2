// Command benchrounds prices an instrumentation against another in paired,
// interleaved rounds, the way BENCHMARKS.md measures on shared machines:
// it builds a package's test binary once, then in each round runs every
// benchmark it is given in a process of its own (the order reversed every
// other round, so neither side always runs first), takes each pair's
// overhead within the round (a traced benchmark minus its untraced
// baseline: time, allocations and bytes per operation), and prints every
// round and the medians with their spread.
//
// The client's instrumentation against otelhttp's, 10 rounds:
//
//	go run ./contextsvcotel/internal/benchrounds -rounds 10
//
// which is, spelled out,
//
//	go run ./contextsvcotel/internal/benchrounds -pkg ./contextsvcotel -benchtime 20000x -rounds 10 \
//	  -pair 'contextsvcotel=BenchmarkClientTelemetry/client-otel:BenchmarkClientTelemetry/client' \
//	  -pair 'otelhttp=BenchmarkClientTelemetry/plain-otelhttp:BenchmarkClientTelemetry/plain'
//
// -set names the other comparisons: receiver (NewWebhookOption against
// otelhttp.NewHandler, each around the bare handler), mock (the mock
// server's own telemetry on a GET against otelhttp.NewHandler around the
// untraced server) and noop (NewMiddleware on no-op providers). -pkg,
// -benchtime and -pair given with it replace the set's.
//
// With two pairs, the last lines compare them: the ratio of the medians
// of their overheads, and the median of the per-round ratios. Run it from
// the module's root.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "benchrounds:", err)
		}
		os.Exit(2)
	}
}

// pair is a traced benchmark and its untraced baseline.
type pair struct {
	name, traced, base string
}

// pairs is the -pair flag, repeatable.
type pairs []pair

func (p *pairs) String() string { return fmt.Sprint(*p) }

func (p *pairs) Set(v string) error {
	got, err := parsePair(v)
	if err != nil {
		return err
	}
	*p = append(*p, got)
	return nil
}

// parsePair parses NAME=TRACED:BASE.
func parsePair(v string) (pair, error) {
	name, rest, ok := strings.Cut(v, "=")
	traced, base, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || name == "" || traced == "" || base == "" {
		return pair{}, fmt.Errorf("-pair %q: want NAME=TRACED:BASE, e.g. ours=BenchmarkX/traced:BenchmarkX/plain", v)
	}
	return pair{name, traced, base}, nil
}

// set is a comparison: a package, how long each run is, and its pairs.
type set struct {
	pkg, benchtime string
	pairs          pairs
}

// sets are the comparisons BENCHMARKS.md gives.
var sets = map[string]set{
	"client": {"./contextsvcotel", "20000x", pairs{
		{"contextsvcotel", "BenchmarkClientTelemetry/client-otel", "BenchmarkClientTelemetry/client"},
		{"otelhttp", "BenchmarkClientTelemetry/plain-otelhttp", "BenchmarkClientTelemetry/plain"},
	}},
	"receiver": {"./contextsvcotel", "50000x", pairs{
		{"contextsvcotel", "BenchmarkWebhookTelemetry/handler-otel", "BenchmarkWebhookTelemetry/handler"},
		{"otelhttp", "BenchmarkWebhookTelemetry/handler-otelhttp", "BenchmarkWebhookTelemetry/handler"},
	}},
	"mock": {"./mockserver", "100000x", pairs{
		{"mock", "BenchmarkServeGETTraced", "BenchmarkServeGET"},
		{"otelhttp", "BenchmarkServeGETOtelhttp", "BenchmarkServeGET"},
	}},
	"noop": {"./contextsvcotel", "20000x", pairs{
		{"contextsvcotel-noop", "BenchmarkClientTelemetry/client-otel-global", "BenchmarkClientTelemetry/client"},
	}},
}

// result is one benchmark's figures in one process.
type result struct {
	ns, bytes, allocs float64
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("benchrounds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setName := fs.String("set", "client", "the comparison: client, receiver, mock or noop")
	pkg := fs.String("pkg", "", "the package whose benchmarks to run (default: the set's)")
	rounds := fs.Int("rounds", 10, "rounds; every benchmark runs once in each, in its own process")
	benchtime := fs.String("benchtime", "", "each run's -test.benchtime (default: the set's)")
	var ps pairs
	fs.Var(&ps, "pair", "NAME=TRACED:BASE, repeatable: a traced benchmark and its baseline (default: the set's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d: want at least 1", *rounds)
	}
	st, ok := sets[*setName]
	if !ok {
		return fmt.Errorf("-set %q: want client, receiver, mock or noop", *setName)
	}
	if *pkg == "" {
		*pkg = st.pkg
	}
	if *benchtime == "" {
		*benchtime = st.benchtime
	}
	if len(ps) == 0 {
		ps = st.pairs
	}
	dir, err := os.MkdirTemp("", "benchrounds")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bench.test")
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, *pkg)
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building %s: %w", *pkg, err)
	}
	// The test binary runs in the package's directory, as go test runs it.
	list := exec.CommandContext(ctx, "go", "list", "-f", "{{.Dir}}", *pkg)
	out, err := list.Output()
	if err != nil {
		return fmt.Errorf("finding %s: %w", *pkg, err)
	}
	pkgDir := strings.TrimSpace(string(out))

	var benches []string
	for _, p := range ps {
		for _, b := range []string{p.traced, p.base} {
			if !slices.Contains(benches, b) {
				benches = append(benches, b)
			}
		}
	}
	fmt.Fprintf(stdout, "%s: %d rounds of %s, each benchmark in its own process, the order reversed every other round\n", *pkg, *rounds, *benchtime)
	over := make([][]result, len(ps))  // per pair, per round
	times := make([][]result, len(ps)) // per pair, per round: traced over base
	for r := range *rounds {
		order := slices.Clone(benches)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		got := map[string]result{}
		for _, b := range order {
			res, err := runOne(ctx, bin, pkgDir, b, *benchtime)
			if err != nil {
				return err
			}
			got[b] = res
		}
		line := fmt.Sprintf("round %2d:", r+1)
		for i, p := range ps {
			o := diff(got[p.traced], got[p.base])
			over[i] = append(over[i], o)
			times[i] = append(times[i], result{ns: got[p.traced].ns / got[p.base].ns})
			line += fmt.Sprintf("  %s %+.1f µs %+.0f allocs %+.0f B (%.1f over %.1f µs)", p.name, o.ns/1e3, o.allocs, o.bytes,
				got[p.traced].ns/1e3, got[p.base].ns/1e3)
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintln(stdout)
	for i, p := range ps {
		ns, lo, hi := spread(over[i], func(r result) float64 { return r.ns })
		allocs, _, _ := spread(over[i], func(r result) float64 { return r.allocs })
		bytes, _, _ := spread(over[i], func(r result) float64 { return r.bytes })
		x, xlo, xhi := spread(times[i], func(r result) float64 { return r.ns })
		fmt.Fprintf(stdout, "%s adds: median %+.1f µs (rounds %+.1f to %+.1f), %+.0f allocs, %+.0f B; %.2fx the baseline (%.2f to %.2f) (%s over %s)\n",
			p.name, ns/1e3, lo/1e3, hi/1e3, allocs, bytes, x, xlo, xhi, p.traced, p.base)
	}
	if len(ps) == 2 {
		a, _, _ := spread(over[0], func(r result) float64 { return r.ns })
		b, _, _ := spread(over[1], func(r result) float64 { return r.ns })
		ratios := make([]result, len(over[0]))
		for r := range ratios {
			ratios[r].ns = over[0][r].ns / over[1][r].ns
		}
		med, lo, hi := spread(ratios, func(r result) float64 { return r.ns })
		fmt.Fprintf(stdout, "%s over %s: ratio of the median overheads %.2f; median of the rounds' ratios %.2f (%.2f to %.2f)\n",
			ps[0].name, ps[1].name, a/b, med, lo, hi)
	}
	return nil
}

// runOne runs one benchmark alone in a process and reads its figures.
func runOne(ctx context.Context, bin, dir, bench, benchtime string) (result, error) {
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", anchored(bench), "-test.benchtime", benchtime,
		"-test.benchmem", "-test.count", "1")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%s: %w\n%s", bench, err, out.String())
	}
	res, ok := parse(out.String())
	if !ok {
		return result{}, fmt.Errorf("%s: no result in %s's output (%v):\n%s", bench, bin, time.Since(start), out.String())
	}
	return res, nil
}

// anchored makes a benchmark name a -test.bench pattern matching it alone:
// each of its slash-separated parts anchored and quoted.
func anchored(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// parse reads the first benchmark line of a test binary's output:
// "BenchmarkX/y-2   20000   51234 ns/op   7693 B/op   96 allocs/op".
func parse(out string) (result, bool) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		var r result
		found := false
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			switch f[i+1] {
			case "ns/op":
				r.ns, found = v, true
			case "B/op":
				r.bytes = v
			case "allocs/op":
				r.allocs = v
			}
		}
		if found {
			return r, true
		}
	}
	return result{}, false
}

func diff(a, b result) result {
	return result{ns: a.ns - b.ns, bytes: a.bytes - b.bytes, allocs: a.allocs - b.allocs}
}

// spread returns the median of a figure over rounds, and its least and
// greatest.
func spread(rs []result, f func(result) float64) (median, lo, hi float64) {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		median = v[n/2]
	} else {
		median = (v[n/2-1] + v[n/2]) / 2
	}
	return median, v[0], v[n-1]
}
