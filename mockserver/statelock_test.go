package mockserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/statefile"
)

// openState opens a server on the state file at path, with the two
// accounts.
func openState(path string) (*Server, error) {
	return Open(append([]Option{WithStateFile(path)}, stateKeys...)...)
}

// openFixture opens a server on the state file at path and writes the
// fixture state to the file through it.
func openFixture(t *testing.T, path string) *Server {
	t.Helper()
	s, err := openState(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.LoadState(strings.NewReader(fixtureState)); err != nil {
		t.Fatal(err)
	}
	if err := s.svc.SaveStateFile(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStateFileOneServerAtATime: while a server keeps its state in a file,
// a second server's Open of the file fails with ErrStateFileInUse, naming
// the file and its lock, and leaves the file as it is; once the first is
// closed, the second opens it and finds the first's state. (Two Opens in
// one process conflict as two processes do: the lock's holders in the
// process are known; TestStateFileSurvivesKill shows a killed holder
// leaves no lock behind.)
func TestStateFileOneServerAtATime(t *testing.T) {
	if !statefile.Supported {
		t.Skip("no record locks on this system: nothing checks")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	s1 := openFixture(t, path)
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	_, err = openState(path)
	var sfe *StateFileError
	if !errors.Is(err, ErrStateFileInUse) || !errors.As(err, &sfe) || sfe.Path != path ||
		!strings.Contains(err.Error(), "state file "+path+": in use by another server: "+path+".lock is locked") {
		t.Fatalf("a second Open: %v; want ErrStateFileInUse naming the file and its lock", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(written) {
		t.Error("the refused Open changed the file")
	}

	if err := s1.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	s2, err := openState(path)
	if err != nil {
		t.Fatalf("Open after the first server closed: %v", err)
	}
	defer s2.Close(t.Context())
	if diff := cmp.Diff(s1.Snapshot(), s2.Snapshot()); diff != "" {
		t.Errorf("the second server's state, against the first one's (-first +second):\n%s", diff)
	}
}

// TestStateFileFailedOpenUnlocks: an Open that refuses the file (here a
// corrupt one) lets the lock go, so the next Open, once the file is
// fixed, succeeds.
func TestStateFileFailedOpenUnlocks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openState(path); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("Open of a corrupt file: %v", err)
	}
	if err := os.WriteFile(path, []byte(fixtureState), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := openState(path)
	if err != nil {
		t.Fatalf("Open after a refused one: %v", err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestStateFileCloseAgainAfterHandover: Close lets the file go; if the
// closed server's state changes and it is closed again while another
// server holds the file, that Close does not write over the other's
// file: it fails with ErrStateFileInUse. With the file free again, it
// writes.
func TestStateFileCloseAgainAfterHandover(t *testing.T) {
	if !statefile.Supported {
		t.Skip("no record locks on this system: nothing checks")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	s1, err := openState(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	s2 := openFixture(t, path)
	before, _ := os.ReadFile(path)

	s1.Reset()
	s1.svc.StateChanged() // s1 has something new to write
	if err := s1.Close(t.Context()); !errors.Is(err, ErrStateFileInUse) {
		t.Errorf("Close of a server whose file another holds: %v; want ErrStateFileInUse", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the closed server wrote over the file another server holds")
	}

	if err := s2.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(t.Context()); err != nil {
		t.Errorf("Close with the file free again: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) == string(before) {
		t.Error("the last Close did not write its state")
	}
}

// TestStateFileSymlink: a state file named through a symbolic link is the
// link's target: a second server on the target, or on the link spelled
// another way, is refused (naming the target's lock, and leaving no lock
// file of its own); writes go through the link, which stays a link; the
// next server on the target finds the state.
func TestStateFileSymlink(t *testing.T) {
	if !statefile.Supported {
		t.Skip("no record locks on this system: nothing checks")
	}
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path, link := filepath.Join(dir, "state.json"), filepath.Join(dir, "link.json")
	if err := os.Symlink("state.json", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	isLink := func() {
		t.Helper()
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("link.json is no longer a link: %v %v", fi, err)
		}
	}
	s1 := openFixture(t, link) // a link to a file not made yet
	isLink()
	written, err := os.ReadFile(path)
	if err != nil || len(written) == 0 {
		t.Fatalf("the link's target: %v, %d bytes", err, len(written))
	}
	for _, other := range []string{path, filepath.Join(dir, ".", "sub", "..", "state.json"), link} {
		_, err := openState(other)
		if !errors.Is(err, ErrStateFileInUse) || !strings.Contains(err.Error(), path+".lock is locked") {
			t.Errorf("a second Open on %s: %v; want ErrStateFileInUse naming %s.lock", other, err, path)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("the directory holds %v, want link.json, state.json and state.json.lock", entries)
	}
	if len(s1.Snapshot().Contexts) == 0 {
		t.Fatal("the fixture holds no context")
	}
	s1.Reset() // a change the last write must take through the link
	if err := s1.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	isLink()
	s2, err := openState(path)
	if err != nil {
		t.Fatalf("Open on the target after the first closed: %v", err)
	}
	defer s2.Close(t.Context())
	if diff := cmp.Diff(s1.Snapshot(), s2.Snapshot()); diff != "" {
		t.Errorf("the second server's state, against the first one's last (-first +second):\n%s", diff)
	}
}
