// Package syncbuf is a buffer for tests: a program, a logger or a server
// writes it from its goroutines while the test reads it, and the test can
// wait for a text to appear in it without polling or sleeping.
//
// Each module that uses this package keeps a copy of it (modules version
// apart, so none imports another's internal packages); the repository's
// module checks (internal/tools/modules) hold the copies identical.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers. The
// zero value is ready to use.
type Buffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	watch map[string]chan struct{} // closed once the buffer holds the key
}

// Write appends p, closing the channels of the texts it completes.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := s.b.Len()
	n, err := s.b.Write(p)
	for text, ch := range s.watch {
		// Only what p added can complete text: its own bytes and the
		// len(text)-1 before them. Each write costs its own length.
		from := max(0, start-len(text)+1)
		if bytes.Contains(s.b.Bytes()[from:], []byte(text)) {
			close(ch)
			delete(s.watch, text)
		}
	}
	return n, err
}

// Seen returns a channel closed once the buffer holds text (at once, when
// it already does).
func (s *Buffer) Seen(text string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if bytes.Contains(s.b.Bytes(), []byte(text)) {
		close(ch)
		return ch
	}
	if old, ok := s.watch[text]; ok {
		return old
	}
	if s.watch == nil {
		s.watch = make(map[string]chan struct{})
	}
	s.watch[text] = ch
	return ch
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
