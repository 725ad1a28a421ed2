package statefile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// The test binary runs itself as a helper process that holds a lock, or
// only the descriptors it was handed, until its stdin closes:
// lockHelperEnv names the file to lock, waitHelperEnv asks it to wait.
const (
	lockHelperEnv = "STATEFILE_TEST_HOLD"
	waitHelperEnv = "STATEFILE_TEST_WAIT"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(lockHelperEnv); name != "" {
		os.Exit(holdHelper(name))
	}
	if os.Getenv(waitHelperEnv) != "" {
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holdHelper takes the lock of path, says "locked" (or why not) on
// stdout, and holds it until stdin closes.
func holdHelper(path string) int {
	h, err := Lock(path)
	if err != nil {
		fmt.Println("error:", err) // what the test checks
		return 0
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	h.Unlock(false)
	return 0
}

// child is a helper process of the test binary.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// startChild starts the test binary as a helper with env, handing it
// extra descriptors, and stops it when the test ends.
func startChild(t *testing.T, env string, extra ...*os.File) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.ExtraFiles = extra
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	t.Cleanup(func() { c.stop(t) })
	return c
}

// stop closes the child's stdin and waits for it to end.
func (c *child) stop(t *testing.T) {
	if c.stdin != nil {
		c.stdin.Close()
		c.stdin = nil
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("the helper process: %v", err)
		}
	}
}

// TestLockInProcess: one holder at a time in a process, under any
// spelling of the file; the second is told who holds it, without the
// first's lock being disturbed; the lock is free again once let go.
func TestLockInProcess(t *testing.T) {
	t.Parallel()
	if !Supported {
		t.Skip("no record locks on this system")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	first, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a refused Lock must not end the first one's
		_, err = Lock(filepath.Join(dir, ".", "state.json"))
		if le, ok := errors.AsType[*LockedError](err); !ok || le.Name != path+".lock" {
			t.Fatalf("a second Lock: %v, want a LockedError naming %s.lock", err, path)
		}
	}
	// Another process sees it held too.
	c := startChild(t, lockHelperEnv+"="+path)
	if !c.out.Scan() || c.out.Text() != "error: in use by another server: "+path+".lock is locked" {
		t.Errorf("another process's Lock: %q, want it refused", c.out.Text())
	}
	c.stop(t)
	first.Unlock(false)
	first.Unlock(false) // a second time does nothing
	again, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock after the first holder let go: %v", err)
	}
	again.Unlock(false)
}

// TestLockAcrossProcesses: a lock another process holds is refused here
// until that process lets it go; a process that ends lets it go.
func TestLockAcrossProcesses(t *testing.T) {
	t.Parallel()
	if !Supported {
		t.Skip("no record locks on this system")
	}
	path := filepath.Join(t.TempDir(), "state.json")
	c := startChild(t, lockHelperEnv+"="+path)
	if !c.out.Scan() || c.out.Text() != "locked" {
		t.Fatalf("the helper: %q", c.out.Text())
	}
	if _, err := Lock(path); !errors.As(err, new(*LockedError)) {
		t.Fatalf("Lock of a file another process holds: %v", err)
	}
	c.stop(t)
	h, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock once the other process ended: %v", err)
	}
	h.Unlock(false)
}

// TestLockNotHeldByForkedChild: a process started while the lock is held
// shares its open files until it execs (here for as long as it lives: it
// is handed the lock file's descriptor); the lock let go here is free at
// once all the same, since a record lock belongs to the process. (A flock
// held by the shared open file stayed held by the child: a test binary
// that started programs in parallel tests saw "state.json.lock is
// locked" when a server started again on its file.)
func TestLockNotHeldByForkedChild(t *testing.T) {
	t.Parallel()
	if !Supported {
		t.Skip("no record locks on this system")
	}
	path := filepath.Join(t.TempDir(), "state.json")
	h, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	c := startChild(t, waitHelperEnv+"=1", h.f) // holds the descriptor as its fd 3
	if !c.out.Scan() || c.out.Text() != "ready" {
		t.Fatalf("the helper: %q", c.out.Text())
	}
	h.Unlock(false)
	again, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock while a child shares the first holder's open lock file: %v", err)
	}
	again.Unlock(false)
	c.stop(t)
}

// TestUnlockRemoves: a lock file made by a Lock whose holder lets go with
// remove (a start that was refused) is removed; one that was there before
// is left.
func TestUnlockRemoves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	h, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	h.Unlock(true)
	if got := names(t, dir); len(got) != 0 && Supported {
		t.Errorf("left %v, want nothing", got)
	}
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err = Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	h.Unlock(true)
	if got := names(t, dir); !slices.Equal(got, []string{"state.json.lock"}) {
		t.Errorf("left %v, want the lock file that was there", got)
	}
}

// TestResolve: every spelling of a file resolves to one path: relative,
// through a linked directory, a link (to a file not made yet too, and a
// relative link), a chain of links; a loop is an error, and so is a
// missing directory.
func TestResolve(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "state.json")
	mustLink := func(old, name string) {
		t.Helper()
		if err := os.Symlink(old, filepath.Join(dir, name)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	mustLink("state.json", "link.json")                // relative, to a file not made yet
	mustLink(filepath.Join(dir, "link.json"), "chain") // a link to a link
	mustLink(dir, "dirlink")
	mustLink("loop2", "loop1")
	mustLink("loop1", "loop2")
	t.Chdir(dir)
	for _, p := range []string{target, "state.json", "./state.json", "sub/../state.json", "link.json", "chain",
		filepath.Join(dir, "dirlink", "link.json"), filepath.Join("dirlink", "state.json")} {
		got, err := Resolve(p)
		if err != nil || got != target {
			t.Errorf("Resolve(%q) = %q, %v; want %q", p, got, err, target)
		}
	}
	if _, err := Resolve("loop1"); err == nil {
		t.Error("a loop of links resolves")
	}
	if _, err := Resolve(filepath.Join(dir, "missing", "state.json")); err == nil {
		t.Error("a missing directory resolves")
	}
}

// TestDroppedHolderKeepsLock: a holder dropped without Unlock (a server
// never closed) keeps its lock for the process's life: the garbage
// collector does not close the file under it, which would end the lock
// unseen and, once the file's inode went to a new file, have that one
// refused as held.
func TestDroppedHolderKeepsLock(t *testing.T) {
	t.Parallel()
	if !Supported {
		t.Skip("no record locks on this system")
	}
	path := filepath.Join(t.TempDir(), "state.json")
	h, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	id := h.id
	h = nil
	runtime.GC()
	runtime.GC()
	c := startChild(t, lockHelperEnv+"="+path)
	if !c.out.Scan() || c.out.Text() != "error: in use by another server: "+path+".lock is locked" {
		t.Errorf("another process's Lock once the holder was dropped: %q, want it refused", c.out.Text())
	}
	c.stop(t)
	holders.Lock()
	f := holders.held[id]
	holders.Unlock()
	(&Held{f: f, name: path + ".lock", id: id}).Unlock(false)
}
