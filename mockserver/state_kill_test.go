package mockserver

import (
	"bufio"
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

	"github.com/google/go-cmp/cmp"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/statefile"
)

// bigStateDoc returns a state document of account team-a with n contexts
// of versions versions each, every version's content about size bytes of
// Markdown in three sections, the last section changed from one version
// to the next.
func bigStateDoc(n, versions, size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"format":"contextsvc-mock-state","version":1,"accounts":[{"id":"team-a","contexts":[`)
	para := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", max(1, size/3/58))
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n{\"id\":\"ctx_%024d\",\"versions\":[", i)
		for v := 1; v <= versions; v++ {
			if v > 1 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"version":%d,"name":"Context %d","content":"# Setup\n\n%s\n\n## Usage\n\n- %s\n- one\n\n# Notes %d\n\n%s","tags":["t%d","all"],"createdAt":"2026-11-21T12:00:00.000Z","createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"}`,
				v, i, para, para, v, para, i%50)
		}
		b.WriteString("]}")
	}
	b.WriteString("\n]}]}\n")
	return b.Bytes()
}

// killHelperEnv names the state file a helper process of
// TestStateFileSurvivesKill writes.
const killHelperEnv = "MOCKSERVER_STATE_KILL_HELPER"

// TestStateFileSurvivesKill kills a process with SIGKILL in the middle of
// writing its state file, and checks that the file is still the previous
// one, whole, and that the next start loads it and clears the half-written
// temporary file. The process is this test binary run again as a helper:
// it loads a large state and writes it, and its write hook reports (and
// stops) once a megabyte of the new file is written.
func TestStateFileSurvivesKill(t *testing.T) {
	if path := os.Getenv(killHelperEnv); path != "" {
		killHelper(path)
		return
	}
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	s1, err := Open(append([]Option{WithStateFile(path)}, stateKeys...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.LoadState(strings.NewReader(fixtureState)); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestStateFileSurvivesKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), killHelperEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	var written int64
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "writing "); ok {
			written, _ = strconv.ParseInt(n, 10, 64)
			break
		}
	}
	if written == 0 {
		_ = cmd.Wait()
		t.Fatalf("the helper did not start writing: %v\nstderr:\n%s", sc.Err(), stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the helper ended with %v, not killed: %s", err, stderr.String())
	}

	// The file is the old one, byte for byte; the new one lies half
	// written beside it.
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, old) {
		t.Fatalf("after the kill the state file is not the previous one (%v): %.200s", err, got)
	}
	entries, _ := os.ReadDir(dir)
	var temps []string
	for _, e := range entries {
		if e.Name() != "state.json" && e.Name() != "state.json.lock" { // the lock the killed helper held
			temps = append(temps, e.Name())
			fi, _ := e.Info()
			if fi.Size() < written || fi.Size() > 4*written {
				t.Errorf("the temporary file holds %d bytes; %d were written when killed", fi.Size(), written)
			}
		}
	}
	if len(temps) != 1 || !strings.HasPrefix(temps[0], ".state.json.tmp-") {
		t.Fatalf("beside the state file: %v, want the half-written temporary file", temps)
	}

	// The next start loads the previous state and clears the leftover.
	s2, err := Open(append([]Option{WithStateFile(path)}, stateKeys...)...)
	if err != nil {
		t.Fatalf("the next start: %v", err)
	}
	if diff := cmp.Diff(s1.Snapshot(), s2.Snapshot()); diff != "" {
		t.Errorf("state after the kill (-before +after):\n%s", diff)
	}
	// (Open took the lock the killed helper held: the kill ended it.)
	if entries, _ := os.ReadDir(dir); len(entries) != 2 || entries[1].Name() != "state.json.lock" {
		t.Errorf("after the next start, beside the state file: %v, want only its lock file", entries)
	}
}

// killHelper is the helper process: it loads a state much larger than the
// file's and writes it; once a megabyte is written, it says so on stdout
// and waits to be killed.
func killHelper(path string) {
	written := func(n int64) {
		if n >= 1<<20 {
			fmt.Printf("writing %d\n", n)
			// Killed here; should the test be gone, do not linger.
			time.Sleep(time.Minute)
			os.Exit(3)
		}
	}
	s, err := Open(append([]Option{WithStateFile(path), WithStateInterval(time.Hour), withStateHooks(statefile.Hooks{Written: written})}, stateKeys...)...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := s.LoadState(bytes.NewReader(bigStateDoc(700, 2, 3000))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	err = s.svc.SaveStateFile()
	fmt.Fprintln(os.Stderr, "the write finished:", err)
	os.Exit(4)
}
