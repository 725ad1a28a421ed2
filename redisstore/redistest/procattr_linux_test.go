package redistest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// panickingTestEnv makes TestPanickingTestHelper run: it is the test
// binary's own child in TestServerDiesWithAPanickingTest.
const panickingTestEnv = "REDISTEST_PANICKING_TEST_PIDFILE"

// TestPanickingTestHelper starts the shared server, writes its PID where
// the parent test says, and panics, so Main never gets to stop it.
func TestPanickingTestHelper(t *testing.T) {
	pidFile := os.Getenv(panickingTestEnv)
	if pidFile == "" {
		t.Skip("run by TestServerDiesWithAPanickingTest")
	}
	s := Shared(t)
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(s.PID())), 0o600); err != nil {
		t.Fatal(err)
	}
	panic("a test panics while the shared redis-server runs")
}

// TestServerDiesWithAPanickingTest: a test binary that panics (or is
// killed by its -timeout, which panics too) never reaches Main's Stop; the
// kernel still ends its redis-server (Pdeathsig), so no server outlives
// the binary that started it.
func TestServerDiesWithAPanickingTest(t *testing.T) {
	t.Parallel()
	Require(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPanickingTestHelper$", "-test.count", "1")
	// TMPDIR: the server's directory, which nobody removes after a panic,
	// goes in this test's own, which is removed.
	cmd.Env = append(os.Environ(), panickingTestEnv+"="+pidFile, "TMPDIR="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "a test panics") {
		t.Fatalf("the helper test did not panic: %v\n%s", err, out)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the helper wrote no PID: %v\n%s", err, out)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil || pid <= 0 {
		t.Fatalf("PID file holds %q", b)
	}
	// SIGKILL is sent as the binary exits; the server may take a moment
	// to go, and then stays a zombie until init reaps it.
	deadline := time.Now().Add(10 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("redis-server %d still runs after the test binary that started it panicked", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gone reports whether process pid has exited (or is a zombie).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// "pid (comm) state …": the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
