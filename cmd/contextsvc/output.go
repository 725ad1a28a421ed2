package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// streams are the command's standard streams and environment, and what it
// knows of the terminal: colour and the progress bar only where a person
// reads.
type streams struct {
	in     io.Reader
	out    io.Writer
	err    io.Writer
	getenv func(string) string
	// outTTY and errTTY tell whether stdout and stderr are terminals.
	outTTY, errTTY bool
	// debug is --debug; dbg its log, once made.
	debug bool
	dbg   *debugLog
	// api are the service's flags of the command that ran, for the words
	// of its errors (where the key and the base URL came from).
	api *apiFlags
	// transport carries the command's requests; nil is net/http's
	// default (tests give one that answers in-process).
	transport http.RoundTripper
}

// debugLog is where --debug (or CONTEXTSVC_DEBUG=1) writes each request,
// nil without it.
func (s *streams) debugLog() *debugLog {
	if !s.debug && !debugEnabled(s.getenv) {
		return nil
	}
	if s.dbg == nil {
		s.dbg = &debugLog{w: s.err}
	}
	return s.dbg
}

// newStreams describes the process's streams, looking at which are
// terminals.
func newStreams(in io.Reader, out, errw io.Writer, getenv func(string) string) *streams {
	return &streams{in: in, out: out, err: errw, getenv: getenv, outTTY: isTerminal(out), errTTY: isTerminal(errw)}
}

// isTerminal reports whether w is a terminal (a file whose device answers
// as one).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && fileIsTerminal(f)
}

// colorOK reports whether a stream that is a terminal (tty) may be
// coloured: not under NO_COLOR (set to anything but empty, as
// https://no-color.org says) nor TERM=dumb.
func (s *streams) colorOK(tty bool) bool {
	return tty && s.getenv("NO_COLOR") == "" && s.getenv("TERM") != "dumb"
}

// paint wraps text in an ANSI style when on is set.
type paint bool

const (
	styleBold  = "1"
	styleRed   = "31"
	styleGreen = "32"
	styleYel   = "33"
)

func (p paint) style(code, text string) string {
	if !p || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// statusStyle is the colour of an HTTP status: green for 2xx, yellow for
// 3xx and 4xx, red otherwise.
func statusStyle(code int) string {
	switch {
	case code >= 200 && code < 300:
		return styleGreen
	case code >= 300 && code < 500:
		return styleYel
	}
	return styleRed
}

// cell makes text safe for one cell of a table on a terminal: control
// characters (an escape sequence in a context's name would drive the
// terminal) and line breaks become visible or spaces, and a long text is
// cut to max runes with "…" (a negative max: never).
func cell(text string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range text {
		if n == max {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case unsafeRune(r):
			b.WriteString("�")
		default:
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}

// unsafeRune reports whether r must not reach a terminal as it is: a
// control character (an escape sequence would drive the terminal), a
// bidirectional override or isolate (it would reorder what follows), or
// the mark of invalid UTF-8.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || r == utf8.RuneError ||
		(r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f'
}

// safeText makes a text (a context's content) safe to print on a
// terminal: line breaks and tabs stay, what unsafeRune names shows as
// "�". Off a terminal the text is printed as it is.
func safeText(text string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unsafeRune(r) {
			return r
		}
		return '�'
	}, text)
}

// when formats a time for a table: UTC, to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// tagList is a tags cell of at most max runes (see cell).
func tagList(tags []string, max int) string {
	if len(tags) == 0 {
		return "-"
	}
	return cell(strings.Join(tags, ","), max)
}

// signed writes a word count delta with its sign.
func signed(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// writeRaw writes a body as it came, ending in a line break.
func writeRaw(w io.Writer, body []byte) error {
	if len(body) == 0 {
		return nil
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	if body[len(body)-1] != '\n' {
		_, err := io.WriteString(w, "\n")
		return err
	}
	return nil
}

// noteMore writes on stderr the line that says more pages follow, if any:
// after the table, where a person reading it looks next.
func noteMore(s *streams, note string) {
	if note != "" {
		fmt.Fprintln(s.err, note)
	}
}

// plainID is an id as -q prints it: as it came for scripts, which use it
// whole, and without what would drive a terminal on one.
func (s *streams) plainID(id string) string {
	if s.outTTY {
		return cell(id, -1)
	}
	return id
}
