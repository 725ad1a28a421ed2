package main

import (
	"io"
	"strings"
	"unicode/utf8"
)

// table writes a list's rows a page at a time, for lists of any length:
// it holds the rows of one page, and each flush writes them. The first
// flush writes the header too. Columns are as wide as their widest cell
// so far: a page aligns with itself and with the pages before, and a
// wider cell later widens its column from there on. A table flushed
// once is laid out as tabwriter lays it out (two spaces between
// columns, the last cell not padded), the header in bold on a terminal.
// For scripts (stdout not a terminal) it is as gh prints one: no header,
// the cells whole and tab-separated, each row as it comes.
type table struct {
	w       io.Writer
	tty     bool
	bold    paint
	header  []string
	widths  []int
	rows    [][]string
	started bool
}

func newTable(s *streams, header ...string) *table {
	return &table{w: s.out, tty: s.outTTY, bold: paint(s.colorOK(s.outTTY)), header: header, widths: make([]int, len(header))}
}

// cell is text made a cell of the table (see cell): cut to max runes on
// a terminal, whole for scripts.
func (t *table) cell(text string, max int) string { return cell(text, t.width(max)) }

// width is max on a terminal, no limit (-1) for scripts.
func (t *table) width(max int) int {
	if !t.tty {
		return -1
	}
	return max
}

// add holds a row until the next flush; each value must already be a
// cell.
func (t *table) add(cells ...string) {
	t.rows = append(t.rows, cells)
}

// flush writes the rows held (and, the first time, the header); with no
// row held it writes nothing.
func (t *table) flush() error {
	if len(t.rows) == 0 {
		return nil
	}
	return t.write()
}

// finish writes the rows held, and the header if nothing was written yet
// (an empty table is its header).
func (t *table) finish() error {
	if !t.started {
		return t.write()
	}
	return t.flush()
}

func (t *table) write() error {
	if !t.tty {
		var b strings.Builder
		for _, r := range t.rows {
			b.WriteString(strings.Join(r, "\t"))
			b.WriteByte('\n')
		}
		t.started = true
		clear(t.rows)
		t.rows = t.rows[:0]
		_, err := io.WriteString(t.w, b.String())
		return err
	}
	if !t.started {
		t.widen(t.header)
	}
	for _, r := range t.rows {
		t.widen(r)
	}
	var b strings.Builder
	if !t.started {
		t.started = true
		b.WriteString(t.bold.style(styleBold, strings.TrimRight(t.line(t.header), " ")))
		b.WriteByte('\n')
	}
	for _, r := range t.rows {
		b.WriteString(t.line(r))
		b.WriteByte('\n')
	}
	clear(t.rows)
	t.rows = t.rows[:0]
	_, err := io.WriteString(t.w, b.String())
	return err
}

// widen makes the columns as wide as the row's cells.
func (t *table) widen(cells []string) {
	for i, c := range cells {
		if i < len(t.widths) {
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
		}
	}
}

// line lays out a row: each cell but the last padded to its column's
// width and two spaces.
func (t *table) line(cells []string) string {
	var b strings.Builder
	for i, c := range cells {
		b.WriteString(c)
		if i < len(cells)-1 && i < len(t.widths) {
			b.WriteString(strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c)+2))
		}
	}
	return b.String()
}
