package testproc

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// recorder is a testing.TB that records Fatalf and Skipf instead of
// ending the test (the real ones call runtime.Goexit; here each ends the
// call under test by a panic the test recovers).
type recorder struct {
	testing.TB
	fatal, skip string
}

type stopped struct{}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	panic(stopped{})
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) Skipf(format string, args ...any) {
	r.skip = fmt.Sprintf(format, args...)
	panic(stopped{})
}

// call runs f with r, recovering the stop of Fatalf or Skipf.
func (r *recorder) call(f func(testing.TB)) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stopped); !ok {
				panic(v)
			}
		}
	}()
	f(r)
}

func TestRequire(t *testing.T) {
	missing := errors.New("exec: \"prog\": executable file not found in $PATH")
	tests := []struct {
		name      string
		ci        string
		err       error
		wantFatal string
		wantSkip  string
	}{
		{name: "installed", err: nil},
		{name: "installed, CI", ci: "true", err: nil},
		{name: "missing locally skips with the hint", err: missing, wantSkip: "exec: \"prog\": executable file not found in $PATH; to run this test: apt-get install prog"},
		{name: "missing in CI fails", ci: "true", err: missing, wantFatal: "prog is not installed and CI=true (.ci/run installs it): exec:"},
		{name: "CI other than true skips", ci: "1", err: missing, wantSkip: "exec: \"prog\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			r := &recorder{TB: t}
			r.call(func(tb testing.TB) { Require(tb, "prog", "apt-get install prog", tc.err) })
			if !strings.HasPrefix(r.fatal, tc.wantFatal) || (tc.wantFatal == "") != (r.fatal == "") {
				t.Errorf("Fatalf %q, want prefix %q", r.fatal, tc.wantFatal)
			}
			if !strings.HasPrefix(r.skip, tc.wantSkip) || (tc.wantSkip == "") != (r.skip == "") {
				t.Errorf("Skipf %q, want prefix %q", r.skip, tc.wantSkip)
			}
		})
	}
}

func TestSkipSummary(t *testing.T) {
	t.Parallel()
	var c skipCounter
	if s := c.summary("pkg"); s != "" {
		t.Errorf("nothing skipped: %q", s)
	}
	c.note("redis-server is not installed (apt-get install redis-server)")
	c.note("chromium is not installed (apt-get install chromium)")
	c.note("redis-server is not installed (apt-get install redis-server)")
	want := "pkg: 2 tests skipped: redis-server is not installed (apt-get install redis-server)\n" +
		"pkg: 1 test skipped: chromium is not installed (apt-get install chromium)\n"
	if s := c.summary("pkg"); s != want {
		t.Errorf("summary %q, want %q", s, want)
	}
}

type proc struct{ closed atomic.Int32 }

func (p *proc) Close() error { p.closed.Add(1); return nil }

func TestSharedWithoutMainFails(t *testing.T) {
	t.Parallel()
	launched := 0
	s := &Shared[*proc]{Program: "prog", Main: "progtest.Main", Launch: func() (*proc, error) { launched++; return &proc{}, nil }}
	r := &recorder{TB: t}
	r.call(func(tb testing.TB) { s.Get(tb) })
	if want := "the package's TestMain must call progtest.Main, which stops the shared prog"; r.fatal != want {
		t.Errorf("Fatalf %q, want %q", r.fatal, want)
	}
	if launched != 0 {
		t.Errorf("launched %d times without Main, want 0", launched)
	}
}

func TestSharedLaunchesOnce(t *testing.T) {
	t.Parallel()
	var launched atomic.Int32
	s := &Shared[*proc]{Program: "prog", Main: "progtest.Main", Launch: func() (*proc, error) { launched.Add(1); return &proc{}, nil }}
	s.running.Store(true) // as Run does
	var wg sync.WaitGroup
	got := make([]*proc, 8)
	for i := range got {
		wg.Go(func() { got[i] = s.Get(t) })
	}
	wg.Wait()
	if n := launched.Load(); n != 1 {
		t.Errorf("launched %d times, want 1", n)
	}
	for i, p := range got {
		if p != got[0] || p == nil {
			t.Errorf("Get %d returned %p, want the one process %p", i, p, got[0])
		}
	}
}

func TestSharedLaunchErrorFailsEveryCaller(t *testing.T) {
	t.Parallel()
	s := &Shared[*proc]{Program: "prog", Main: "progtest.Main", Launch: func() (*proc, error) { return nil, errors.New("prog: no free port") }}
	s.running.Store(true)
	for range 2 {
		r := &recorder{TB: t}
		r.call(func(tb testing.TB) { s.Get(tb) })
		if r.fatal != "prog: no free port" {
			t.Errorf("Fatal %q, want the launch error", r.fatal)
		}
	}
	if s.started {
		t.Error("a failed launch counts as started: Run would Close a nil process")
	}
}
