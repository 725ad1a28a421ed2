package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLinks bounds the symbolic links Resolve follows, as the kernel does
// (40 on Linux).
const maxLinks = 40

// Resolve returns the file path reaches: absolute, with every symbolic
// link on the way followed, the file's own included (also a link to a
// file not made yet). Every spelling of a file (relative, absolute,
// through a linked directory, a link to it) resolves to the same path, so
// its lock is one, and a write through a link replaces the link's target,
// the link staying a link. The file's directory must exist. (Another hard
// link to the file is another name Resolve cannot tell: see Links.)
func Resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for range maxLinks {
		dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
		if err != nil {
			return "", fmt.Errorf("cannot write a file in its directory: %w", err)
		}
		abs = filepath.Join(dir, filepath.Base(abs))
		fi, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Mode()&fs.ModeSymlink == 0) {
			return abs, nil
		}
		if err != nil {
			return "", err
		}
		target, err := os.Readlink(abs)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(abs), target)
		}
		abs = target
	}
	return "", fmt.Errorf("more than %d symbolic links on the way to the file", maxLinks)
}

// Links returns how many names (hard links) the file at path has: 0 when
// it does not exist, 1 when it has no other or the system cannot tell.
// A server on another of its names takes another lock, and a write
// replaces this name's file only: the other names keep the old one.
func Links(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return links(fi)
}
