// Package statefile keeps a file whole and owned by one process: it
// replaces the file atomically ([WriteAtomic]), clears what a write cut
// short by a crash left beside it ([RemoveStaleTemps]), checks that its
// directory takes new files ([CheckWritableDir]), and locks it for one
// holder at a time ([Lock]); and a [Keeper] writes a document to it after
// each change, once an interval has passed, and at Close.
//
// It owns the file's bytes on disk and when they are written, nothing of
// what they mean: the state document is copied and written by its callers
// ([Doc]), through the io.Writer they are given, and read by them. It
// imports nothing of the mock server but model, whose errors it returns.
package statefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tempPrefix is the name prefix of the temporary files of path's writes.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// RemoveStaleTemps removes the temporary files that writes of path
// interrupted by a crash left beside it. A missing directory is no error:
// the caller reports it as the directory's problem.
func RemoveStaleTemps(path string) error {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	prefix := tempPrefix(path)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// CheckWritableDir makes sure a temporary file can be made beside path.
func CheckWritableDir(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// WriteAtomic replaces the file at path with what write writes, so that
// at every moment path holds either the old file or the new one, whole:
// write into a temporary file in the same directory (mode 0600), sync it,
// rename it over path, sync the directory so the rename itself survives a
// crash. On failure the temporary file is removed and path is untouched.
// It returns what write returned.
func WriteAtomic(path string, write func(io.Writer) (int64, error)) (n int64, err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return 0, err
	}
	if n, err = write(f); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return n, err
	}
	defer d.Close()
	return n, d.Sync()
}
