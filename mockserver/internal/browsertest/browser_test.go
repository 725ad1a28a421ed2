package browsertest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStartupLog: the endpoint is found on its own line however the
// output is cut into writes, only once, and the log keeps the tail.
func TestStartupLog(t *testing.T) {
	t.Parallel()
	const url = "ws://127.0.0.1:4321/devtools/browser/0c1d"
	tests := []struct {
		name   string
		writes []string
		want   string // the endpoint, "" for none
	}{
		{"one write", []string{"[1:2:ERROR:bus.cc] no dbus\n\nDevTools listening on " + url + "\n"}, url},
		{"cut in the prefix", []string{"noise\nDevTools list", "ening on " + url + "\n"}, url},
		{"cut in the url", []string{"DevTools listening on ws://127.0.0.1:43", "21/devtools/browser/0c1d\r\n"}, url},
		{"line not ended", []string{"DevTools listening on " + url}, ""},
		{"not at the line's start", []string{"echo DevTools listening on " + url + "\n"}, ""},
		{"second endpoint ignored", []string{"DevTools listening on " + url + "\nDevTools listening on ws://127.0.0.1:1/x\n"}, url},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newStartupLog(1 << 10)
			for _, w := range tt.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got := ""
			select {
			case got = <-l.endpoint:
			default:
			}
			if got != tt.want {
				t.Errorf("endpoint %q, want %q", got, tt.want)
			}
			if want := strings.Join(tt.writes, ""); l.String() != want {
				t.Errorf("log %q, want %q", l.String(), want)
			}
		})
	}

	l := newStartupLog(8)
	l.Write([]byte("0123456789abc"))
	if got := l.String(); got != "56789abc" {
		t.Errorf("the log keeps %q, want the last 8 bytes", got)
	}
}

// requireRecorder is a testing.TB that records Skipf and Fatalf, each of
// which ends the goroutine as the real ones do.
type requireRecorder struct {
	testing.TB
	skipped, failed string
}

func (r *requireRecorder) Helper() {}
func (r *requireRecorder) Skipf(f string, a ...any) {
	r.skipped = fmt.Sprintf(f, a...)
	runtime.Goexit()
}
func (r *requireRecorder) Fatalf(f string, a ...any) {
	r.failed = fmt.Sprintf(f, a...)
	runtime.Goexit()
}

// TestRequire: without the program a test skips and says how to install
// it, or fails with CI=true; the environment variable chooses another
// program.
func TestRequire(t *testing.T) {
	tests := []struct {
		program, ci  string
		skip, failed string // substrings; "" for none
	}{
		{program: "/nonexistent/chromium", ci: "", skip: InstallHint},
		{program: "/nonexistent/chromium", ci: "true", failed: "CI=true"},
		{program: "no-such-browser-on-path", ci: "", skip: ProgramEnv + "=no-such-browser-on-path"},
		{program: "sh", ci: "true"}, // found: the test runs
	}
	for _, tt := range tests {
		t.Run(tt.program+" CI="+tt.ci, func(t *testing.T) {
			t.Setenv(ProgramEnv, tt.program)
			t.Setenv("CI", tt.ci)
			r := &requireRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				Require(r)
			}()
			<-done
			for _, c := range []struct{ got, want, what string }{{r.skipped, tt.skip, "skip"}, {r.failed, tt.failed, "failure"}} {
				if (c.want == "") != (c.got == "") || !strings.Contains(c.got, c.want) {
					t.Errorf("%s: %q, want one saying %q", c.what, c.got, c.want)
				}
			}
		})
	}
}

// TestLaunchChecksItsProcess: Launch accepts only the browser it started.
// A program that exits at once is an error with its output; one that
// prints another browser's endpoint (as when another process answers on
// the port) is refused by the process id the endpoint reports, and
// killed. Neither leaves its directory behind.
func TestLaunchChecksItsProcess(t *testing.T) {
	other := Shared(t)
	dir := t.TempDir()
	impostor := filepath.Join(dir, "impostor")
	script := "#!/bin/sh\necho 'DevTools listening on " + other.WebSocketURL() + "' >&2\nexec sleep 60\n"
	if err := os.WriteFile(impostor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", dir)
	tests := []struct {
		program string
		want    string
	}{
		{"false", "exited before it listened"},
		{impostor, fmt.Sprintf("process id is %d, not", other.PID())},
	}
	for _, tt := range tests {
		t.Setenv(ProgramEnv, tt.program)
		b, err := Launch()
		if err == nil {
			b.Close()
			t.Errorf("Launch of %s: no error", tt.program)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Launch of %s: %v, want an error saying %q", tt.program, err, tt.want)
		}
	}
	left, err := filepath.Glob(filepath.Join(dir, "browsertest-*"))
	if err != nil || len(left) != 0 {
		t.Errorf("Launch left %v behind (%v)", left, err)
	}
}
