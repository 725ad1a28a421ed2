package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/statefile"
)

var stateBenchContexts = flag.Int("state-contexts", 10_000,
	"BenchmarkState: contexts in the state, each with 3 versions of about 1 KB of Markdown (BENCHMARKS.md: 100000)")

// BenchmarkState measures the state file at scale: -state-contexts
// contexts of 3 versions each (about 1 KB of Markdown in three sections
// a version; the default 10,000, BENCHMARKS.md's 100,000), as the server
// writes them. Each figure has its baseline in the same run:
//
//   - save: the whole saveStateFile (copy under the locks, encode, write,
//     fsync, rename, fsync the directory), against save-baseline: the same
//     bytes written the same atomic way, so the ratio is the cost of
//     making the document;
//
//   - load: Open of a server on the file (read, check every field, build
//     the indexes, analyze each context's Markdown), against
//     load-baseline: os.ReadFile and json.Unmarshal of the same file into
//     plain structs, with no check at all;
//
//   - heap-MB: the live heap the loaded state adds (after a GC), against
//     the baseline's plain structs; text-MB is the text (names and
//     contents of every version) the state holds;
//
//   - peak-heap-MB: the most heap (objects live or not yet collected)
//     seen while the sub-benchmark ran, sampled every millisecond;
//     peak-live-MB: the most live heap a collection found then (the
//     former moves with when the collections ran, this one hardly);
//
//   - cpu-ms/op: the process's CPU time (user and system, every core) per
//     operation, which a busy machine moves far less than the time.
//
//     go test ./mockserver -run '^$' -bench 'BenchmarkState$' -benchtime 1x -benchmem -state-contexts 100000 -timeout 30m
func BenchmarkState(b *testing.B) {
	n := *stateBenchContexts
	path := filepath.Join(b.TempDir(), "state.json")
	// No periodic write: only the save sub-benchmark writes (one running
	// during another sub-benchmark would be measured by it).
	src, err := Open(append([]Option{WithStateFile(path), WithStateInterval(time.Hour)}, stateKeys...)...)
	if err != nil {
		b.Fatal(err)
	}
	if err := src.LoadState(bytes.NewReader(bigStateDoc(n, 3, 1000))); err != nil {
		b.Fatal(err)
	}
	if err := src.svc.SaveStateFile(); err != nil {
		b.Fatal(err)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	size := int64(len(doc))
	var text int64
	for _, c := range src.Contexts("team-a") {
		for _, v := range c.Versions {
			text += int64(len(v.Name) + len(v.Content))
		}
	}
	b.Logf("%d contexts, %d versions: a %.1f MB file, %.1f MB of text", n, 3*n, float64(size)/1e6, float64(text)/1e6)

	b.Run("save", func(b *testing.B) {
		b.SetBytes(size)
		peak, cpu := watchHeap(), watchCPU(b)
		for b.Loop() {
			if err := src.svc.SaveStateFile(); err != nil {
				b.Fatal(err)
			}
		}
		cpu()
		reportPeaks(b, peak)
	})
	b.Run("save-baseline", func(b *testing.B) {
		b.SetBytes(size)
		other := filepath.Join(filepath.Dir(path), "baseline.json")
		for b.Loop() {
			if _, err := statefile.WriteAtomic(other, func(w io.Writer) (int64, error) {
				n, err := w.Write(doc)
				return int64(n), err
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
	doc = nil
	b.Run("load", func(b *testing.B) {
		b.SetBytes(size)
		// A file of its own: the source server holds the lock on path.
		other := filepath.Join(filepath.Dir(path), "load.json")
		if err := os.Link(path, other); err != nil {
			b.Fatal(err)
		}
		var s *Server
		before := liveHeap()
		peak, cpu := watchHeap(), watchCPU(b)
		for b.Loop() {
			if s != nil {
				b.StopTimer()
				closeServer(b, s)
				s = nil
				b.StartTimer()
			}
			if s, err = Open(append([]Option{WithStateFile(other)}, stateKeys...)...); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu()
		reportPeaks(b, peak)
		reportHeap(b, before, text)
		closeServer(b, s)
	})
	b.Run("load-baseline", func(b *testing.B) {
		b.SetBytes(size)
		type state struct {
			Format   string
			Version  int
			Accounts []struct {
				ID         string
				ContextSeq int
				Contexts   []struct {
					ID       string
					Seq      int
					Versions []model.VersionRecordJSON
				}
			}
		}
		var st *state
		before := liveHeap()
		peak, cpu := watchHeap(), watchCPU(b)
		for b.Loop() {
			st = nil
			data, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			st = new(state)
			if err := json.Unmarshal(data, st); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu()
		reportPeaks(b, peak)
		reportHeap(b, before, text)
		runtime.KeepAlive(st)
	})
}

func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// reportHeap reports the live heap added since before, and the text it
// holds.
func reportHeap(b *testing.B, before, text int64) {
	b.ReportMetric(float64(liveHeap()-before)/1e6, "heap-MB")
	b.ReportMetric(float64(text)/1e6, "text-MB")
}

// closeServer closes a server the benchmark opened.
func closeServer(b *testing.B, s *Server) {
	b.Helper()
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// watchHeap samples the heap until the function it returns is called,
// which returns the highest samples in bytes: of the heap's objects (live
// and not yet collected: what a benchmark's peak heap is, with the
// garbage collector's timing in it) and of the live heap as the last
// collection found it (what the work holds at its most, whenever the
// collections ran).
func watchHeap() func() (objects, live float64) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	var peak, peakLive uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			peak = max(peak, samples[0].Value.Uint64())
			peakLive = max(peakLive, samples[1].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (float64, float64) {
		close(done)
		<-stopped
		return float64(peak), float64(peakLive)
	}
}

// reportPeaks reports what watchHeap's function returns.
func reportPeaks(b *testing.B, peak func() (float64, float64)) {
	objects, live := peak()
	b.ReportMetric(objects/1e6, "peak-heap-MB")
	b.ReportMetric(live/1e6, "peak-live-MB")
}

// watchCPU reports, when the function it returns is called, the process's
// CPU time per operation since watchCPU: unlike the time per operation,
// it hardly moves with the machine's load.
func watchCPU(b *testing.B) func() {
	start, ok := processCPU()
	return func() {
		if end, ok2 := processCPU(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N)/1e6, "cpu-ms/op")
		}
	}
}
