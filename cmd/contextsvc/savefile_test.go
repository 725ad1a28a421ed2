package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveExport: a file is written whole or not at all, never over a
// file or link that appears meanwhile, and errors name the target.
func TestSaveExport(t *testing.T) {
	t.Parallel()
	t.Run("written", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "out.md")
		if n, err := saveExport(path, strings.NewReader("text"), false); err != nil || n != 4 {
			t.Fatalf("%d, %v", n, err)
		}
		if b, _ := os.ReadFile(path); string(b) != "text" || len(dirFiles(t, dir)) != 1 {
			t.Errorf("the file holds %q; the directory %q", b, dirFiles(t, dir))
		}
	})
	t.Run("a file that appears meanwhile", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "out.md")
		// The name is taken while the download runs (after any check).
		r := io.MultiReader(strings.NewReader("text"), readerFunc(func([]byte) (int, error) {
			os.WriteFile(path, []byte("theirs"), 0o644)
			return 0, io.EOF
		}))
		_, err := saveExport(path, r, false)
		var fe *fileExistsError
		if !errors.As(err, &fe) {
			t.Fatalf("err %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "theirs" || len(dirFiles(t, dir)) != 1 {
			t.Errorf("the file holds %q; the directory %q", b, dirFiles(t, dir))
		}
	})
	t.Run("a link that appears meanwhile", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		victim := filepath.Join(dir, "victim")
		os.WriteFile(victim, []byte("safe"), 0o644)
		path := filepath.Join(dir, "out.md")
		r := io.MultiReader(strings.NewReader("text"), readerFunc(func([]byte) (int, error) {
			os.Symlink(victim, path)
			return 0, io.EOF
		}))
		if _, err := saveExport(path, r, false); err == nil {
			t.Fatal("written through a symbolic link")
		}
		if b, _ := os.ReadFile(victim); string(b) != "safe" {
			t.Errorf("the link's target holds %q", b)
		}
	})
	t.Run("a broken download", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "out.md")
		r := io.MultiReader(strings.NewReader("half"), readerFunc(func([]byte) (int, error) {
			return 0, io.ErrUnexpectedEOF
		}))
		_, err := saveExport(path, r, false)
		if err == nil || !strings.Contains(err.Error(), "downloading into "+path) || strings.Contains(err.Error(), ".tmp") {
			t.Errorf("err %v", err)
		}
		if got := dirFiles(t, dir); len(got) != 0 {
			t.Errorf("left %q", got)
		}
	})
	t.Run("replaced when asked", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "out.md")
		os.WriteFile(path, []byte("old"), 0o644)
		if _, err := saveExport(path, strings.NewReader("new"), true); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != "new" || len(dirFiles(t, dir)) != 1 {
			t.Errorf("the file holds %q; the directory %q", b, dirFiles(t, dir))
		}
	})
	t.Run("a name at the file system's limit", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, strings.Repeat("n", 251)+".pdf")
		if _, err := saveExport(path, strings.NewReader("x"), false); err != nil {
			t.Fatal(err)
		}
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
