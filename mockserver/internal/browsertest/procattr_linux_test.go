package browsertest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childModeEnv makes TestChildHelper run: it is the test binary's own
// child in TestBrowserGoneAfterTestBinary. Its value is "pass" or "panic";
// childOutEnv names the file where the child writes the browser's PID and
// directory.
const (
	childModeEnv = "BROWSERTEST_CHILD_MODE"
	childOutEnv  = "BROWSERTEST_CHILD_OUT"
)

// TestChildHelper starts the shared browser with a tab, writes its PID and
// directory where the parent test says, and then passes (Main closes the
// browser) or panics (Main never gets to).
func TestChildHelper(t *testing.T) {
	mode := os.Getenv(childModeEnv)
	if mode == "" {
		t.Skip("run by TestBrowserGoneAfterTestBinary")
	}
	New(t)
	b := Shared(t)
	if err := os.WriteFile(os.Getenv(childOutEnv), fmt.Appendf(nil, "%d\n%s", b.PID(), b.Dir()), 0o600); err != nil {
		t.Fatal(err)
	}
	if mode == "panic" {
		panic("a test panics while the shared chromium runs")
	}
}

// TestBrowserGoneAfterTestBinary: when a test binary ends, its chromium
// is gone, with every process it started (zygotes, renderers, GPU and
// network services, crashpad), whether the binary ends normally (Main
// closes the browser and removes its directory) or panics (as a test
// killed by -timeout does: the kernel kills the browser, Pdeathsig, and
// its children follow).
func TestBrowserGoneAfterTestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two more browsers, in two more test binaries")
	}
	t.Parallel()
	Require(t)
	for _, mode := range []string{"pass", "panic"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			out := filepath.Join(tmp, "out")
			cmd := exec.Command(os.Args[0], "-test.run", "^TestChildHelper$", "-test.count", "1", "-test.v")
			// TMPDIR: the browser's directory, which nobody removes after a
			// panic, goes in this test's own, which is removed.
			cmd.Env = append(os.Environ(), childModeEnv+"="+mode, childOutEnv+"="+out, "TMPDIR="+tmp)
			output, err := cmd.CombinedOutput()
			switch {
			case mode == "pass" && err != nil:
				t.Fatalf("the helper test failed: %v\n%s", err, output)
			case mode == "panic" && (err == nil || !bytes.Contains(output, []byte("a test panics"))):
				t.Fatalf("the helper test did not panic: %v\n%s", err, output)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("the helper wrote no PID: %v\n%s", err, output)
			}
			pidText, dir, _ := strings.Cut(string(b), "\n")
			pid, err := strconv.Atoi(pidText)
			if err != nil || pid <= 0 || !strings.HasPrefix(dir, tmp) {
				t.Fatalf("the helper wrote %q", b)
			}
			// After a panic the SIGKILL comes as the binary exits, and the
			// children notice their parent's death a moment later.
			deadline := time.Now().Add(10 * time.Second)
			for {
				left := browserProcesses(pid, dir)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					for _, p := range left {
						syscall.Kill(p, syscall.SIGKILL)
					}
					t.Fatalf("processes %v of chromium %d still run after the test binary ended (%s)", left, pid, mode)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if _, err := os.Stat(dir); mode == "pass" && !os.IsNotExist(err) {
				t.Errorf("the browser's directory %s is still there (%v)", dir, err)
			}
		})
	}
}

// browserProcesses returns the live (not zombie) processes of the chromium
// whose browser process is pid and whose files are in dir: those in its
// process group, and those whose command line names dir (crashpad's
// handler leaves the group, but its database is in dir).
func browserProcesses(pid int, dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var procs []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid pgrp …": the fields follow the last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		pgrp, _ := strconv.Atoi(fields[2])
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if p == pid || pgrp == pid || bytes.Contains(cmdline, []byte(dir)) {
			procs = append(procs, p)
		}
	}
	return procs
}
