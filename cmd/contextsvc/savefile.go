package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A file the command writes is written whole or not at all, and never in
// place of a file that is there unless the user asked (--force): first to
// a temporary file in the target's directory (so the last step stays on
// one file system), then published under the target's name. Without
// --force the temporary file is hard-linked to the target, which fails if
// anything has that name, whatever came in between the check and the
// write (a file, a symbolic link); with it, renamed over the target.
// Errors name the target, never the temporary file the user did not ask
// for.

// fileExistsError is a target that is there already, without --force.
type fileExistsError struct{ path string }

func (e *fileExistsError) Error() string {
	return fmt.Sprintf("%s exists: it was left as it is (--force replaces it)", e.path)
}

// checkTarget refuses, before anything is downloaded, a target that is
// there already, unless replace is set.
func checkTarget(path string, replace bool) error {
	if replace {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return &fileExistsError{path}
	}
	return nil
}

// pendingFile is a file being written: its temporary file, published
// under the target's name once whole.
type pendingFile struct {
	*os.File
	target string
	done   bool
}

// createPending starts a file for target with the permissions perm.
func createPending(target string, perm fs.FileMode) (*pendingFile, error) {
	// The temporary name does not grow with the target's, so a target
	// name near the file system's limit still has a temporary file.
	f, err := os.CreateTemp(filepath.Dir(target), ".contextsvc-*.tmp")
	if err != nil {
		return nil, targetError(target, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, targetError(target, err)
	}
	return &pendingFile{File: f, target: target}, nil
}

// discard removes the temporary file, unless the file was published; it
// is safe to call more than once, and after publish.
func (p *pendingFile) discard() {
	if p.done {
		return
	}
	p.done = true
	p.File.Close()
	os.Remove(p.File.Name())
}

// closeFile closes the temporary file once written, to see the errors a
// close reports (a full disk on some file systems).
func (p *pendingFile) closeFile() error {
	if err := p.File.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return targetError(p.target, err)
	}
	return nil
}

// publish gives the written file the target's name: a hard link that
// fails when the name is taken, or with replace a rename over it. The
// temporary file is gone afterwards, whatever the outcome.
func (p *pendingFile) publish(replace bool) error {
	defer p.discard()
	if err := p.closeFile(); err != nil {
		return err
	}
	tmp := p.File.Name()
	if replace {
		if err := os.Rename(tmp, p.target); err != nil {
			return targetError(p.target, err)
		}
		p.done = true
		return nil
	}
	err := os.Link(tmp, p.target)
	switch {
	case err == nil:
		return nil // discard removes the temporary name; the target stays
	case errors.Is(err, fs.ErrExist):
		return &fileExistsError{p.target}
	}
	// A file system without hard links: the target is created only if
	// absent (O_EXCL), and the bytes copied into it.
	return copyExclusive(tmp, p.target)
}

// copyExclusive copies the file at src to a new file dst, which must not
// exist; a failure removes what was created.
func copyExclusive(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return targetError(dst, err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return targetError(dst, err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if errors.Is(err, fs.ErrExist) {
		return &fileExistsError{dst}
	}
	if err != nil {
		return targetError(dst, err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return targetError(dst, err)
	}
	return nil
}

// targetError is an error of writing target, naming it rather than the
// temporary file the error came from (an *fs.PathError or *os.LinkError
// names the file it was about).
func targetError(target string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("cannot write %s: %w", target, err)
}
