package statefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// names lists the files of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestWriteAtomic: a write that succeeds replaces the file, mode 0600; one
// that fails leaves the old file as it was and no temporary file behind.
func TestWriteAtomic(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		write   func(io.Writer) (int64, error)
		wantErr error
		want    string
	}{
		{"replaces", func(w io.Writer) (int64, error) { n, err := io.WriteString(w, "new"); return int64(n), err }, nil, "new"},
		{"fails half-way", func(w io.Writer) (int64, error) { _, _ = io.WriteString(w, "ne"); return 2, boom }, boom, "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := WriteAtomic(path, tc.write)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("WriteAtomic: %v, want %v", err, tc.wantErr)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Errorf("the file holds %q, want %q", got, tc.want)
			}
			if got := names(t, dir); !slices.Equal(got, []string{"state.json"}) {
				t.Errorf("the directory holds %v, want the file alone", got)
			}
			if fi, _ := os.Stat(path); tc.wantErr == nil && fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", fi.Mode().Perm())
			}
		})
	}
}

// TestRemoveStaleTemps removes the temporary files of the file's writes,
// and nothing else.
func TestRemoveStaleTemps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"state.json", ".state.json.tmp-123", ".state.json.tmp-x", ".other.json.tmp-1", "state.json.lock"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveStaleTemps(filepath.Join(dir, "state.json")); err != nil {
		t.Fatal(err)
	}
	if got, want := names(t, dir), []string{".other.json.tmp-1", "state.json", "state.json.lock"}; !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
	if err := RemoveStaleTemps(filepath.Join(dir, "missing", "state.json")); err != nil {
		t.Errorf("a missing directory: %v, want no error", err)
	}
}
