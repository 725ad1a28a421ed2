package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// exportFormat is one format of export: the API's name, the names --format
// takes, the file extensions that mean it (the first is the one a file
// name is given) and whether it is binary (not for a terminal).
type exportFormat struct {
	api    contextsvc.ExportFormat
	names  []string
	exts   []string
	binary bool
}

var exportFormats = []exportFormat{
	{contextsvc.ExportMarkdown, []string{"md", "markdown"}, []string{".md", ".markdown"}, false},
	{contextsvc.ExportHTML, []string{"html"}, []string{".html", ".htm"}, false},
	{contextsvc.ExportText, []string{"txt", "text"}, []string{".txt", ".text"}, false},
	{contextsvc.ExportPDF, []string{"pdf"}, []string{".pdf"}, true},
	{contextsvc.ExportJSON, []string{"json"}, []string{".json"}, false},
}

// formatNamed returns the format --format names.
func formatNamed(name string) (exportFormat, bool) {
	for _, f := range exportFormats {
		for _, n := range f.names {
			if strings.EqualFold(name, n) {
				return f, true
			}
		}
	}
	return exportFormat{}, false
}

// formatOfExt returns the format a file name's extension means.
func formatOfExt(ext string) (exportFormat, bool) {
	for _, f := range exportFormats {
		for _, e := range f.exts {
			if strings.EqualFold(ext, e) {
				return f, true
			}
		}
	}
	return exportFormat{}, false
}

// hasExt reports whether name ends in one of f's extensions.
func (f exportFormat) hasExt(name string) bool {
	ext := filepath.Ext(name)
	for _, e := range f.exts {
		if strings.EqualFold(ext, e) {
			return true
		}
	}
	return false
}

// exportOptions are export's flags and argument.
type exportOptions struct {
	id      string
	format  string // as given; empty: from the output's extension
	version int
	output  string
	force   bool
	raw     bool
}

func newContextsExportCmd(s *streams) *cobra.Command {
	var o exportOptions
	cmd, api := oneContextCmd(s, &cobra.Command{
		Use:   "export ID [--format md|html|txt|pdf|json] [--version N] -o FILE|DIR|- [--force]",
		Short: "Download a context as a document (-o - writes it to stdout)",
		Long: `Download a context as a document: Markdown, HTML, plain text, PDF or the
context's JSON.

-o names the file, written whole or not at all; without --format, its
extension gives the format (.md or .markdown, .html or .htm, .txt, .pdf,
.json), and a --format that contradicts it is refused. -o DIR saves under
the service's file name, kept to a plain name in DIR with the format's
extension (or the context's id when the service gives no usable one). A
file that is there already is never replaced unless --force is given.

-o - writes to stdout. On a terminal, a PDF is refused (it would garble
the terminal) and a text format is written without the control sequences
that would drive the terminal (a title, colours, a cleared screen); --raw
writes the bytes as they came. Off a terminal (a pipe, a file) the bytes
are written as they came.`,
		Example: `  contextsvc contexts export ctx_123 -o runbook.pdf
  contextsvc contexts export ctx_123 --format html -o exports/
  contextsvc contexts export ctx_123 --version 1 -o - | less`,
	})
	fs := cmd.Flags()
	fs.StringVar(&o.format, "format", "", "the document's `format`: md, html, txt, pdf or json (default: -o's extension, else md)")
	fs.IntVar(&o.version, "version", 0, "export this earlier `version` (default 0: the current one)")
	fs.StringVarP(&o.output, "output", "o", "", "the `file` to write, a directory, or - for stdout (required)")
	fs.BoolVar(&o.force, "force", false, "replace a file that is there already")
	fs.BoolVar(&o.raw, "raw", false, "with -o - on a terminal, write the bytes as they came: a PDF, a text's control sequences")
	_ = cmd.MarkFlagRequired("output")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"md", "html", "txt", "pdf", "json"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		o.id = args[0]
		f, err := o.settle(s)
		if err != nil {
			return err
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		return runExport(cmd.Context(), s, c, &o, f)
	})
	return cmd
}

// settle checks the flags before anything is sent, and returns the
// format: --format's, else the output file's extension's, else Markdown.
func (o *exportOptions) settle(s *streams) (exportFormat, error) {
	if o.version < 0 {
		return exportFormat{}, usagef("--version must be 1 or more (0: the current one), got %d", o.version)
	}
	if o.output == "" {
		return exportFormat{}, usagef("-o needs a file, a directory, or - for stdout")
	}
	var f exportFormat
	named := o.format != ""
	if named {
		var ok bool
		if f, ok = formatNamed(o.format); !ok {
			return exportFormat{}, usagef("--format must be md, html, txt, pdf or json, got %q", o.format)
		}
	}
	toFile := o.output != "-" && !isDir(o.output)
	if toFile {
		ext := filepath.Ext(o.output)
		byExt, known := formatOfExt(ext)
		switch {
		case named && known && byExt.api != f.api:
			return exportFormat{}, usagef("--format %s contradicts -o %s, whose extension %s means %s: name a %s file or leave out --format",
				o.format, o.output, ext, byExt.names[0], f.exts[0])
		case !named && known:
			f = byExt
		case !named && ext != "":
			return exportFormat{}, usagef("-o %s: %s is not the extension of an export's format (.md, .html, .txt, .pdf, .json): give --format", o.output, ext)
		}
		if err := checkTarget(o.output, o.force); err != nil {
			return exportFormat{}, err
		}
	}
	if f.api == "" {
		f, _ = formatNamed("md") // the API's default
	}
	if o.output == "-" && s.outTTY && f.binary && !o.raw {
		return exportFormat{}, usagef("stdout is a terminal, which a %s would garble: give -o FILE, redirect stdout (> FILE, | less), or --raw to write it anyway", strings.ToUpper(f.names[0]))
	}
	return f, nil
}

// isDir reports whether path is a directory (a symbolic link to one too).
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// runExport downloads the export and writes it where o.output says.
func runExport(ctx context.Context, s *streams, c *contextsvc.Client, o *exportOptions, f exportFormat) error {
	exp, err := c.Contexts.Export(ctx, o.id, &contextsvc.ExportOptions{Format: f.api, Version: o.version})
	if err != nil {
		return err
	}
	defer exp.Body.Close()
	if o.output == "-" {
		return writeExportToStdout(s, exp.Body, o.raw)
	}
	path := o.output
	if isDir(o.output) {
		path = filepath.Join(o.output, exportFileName(exp.Filename, o.id, o.version, f))
	}
	n, err := saveExport(path, exp.Body, o.force)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.out, "Wrote %s (%d bytes, %s)\n", cell(path, 500), n, cell(exp.ContentType, 100))
	return err
}

// writeExportToStdout copies the document to stdout: as it came off a
// terminal or with raw, else without what would drive the terminal.
func writeExportToStdout(s *streams, body io.Reader, raw bool) error {
	if !s.outTTY || raw {
		_, err := io.Copy(s.out, body)
		return err
	}
	tw := newTermSafeWriter(s.out)
	_, err := io.Copy(tw, body)
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if err == nil && tw.dropped > 0 {
		fmt.Fprintf(s.err, "Left out %d control sequences or characters, which would drive the terminal (--raw writes them).\n", tw.dropped)
	}
	return err
}

// saveExport writes the document to path, whole or not at all, and never
// over a file that is there unless replace is set.
func saveExport(path string, body io.Reader, replace bool) (int64, error) {
	pf, err := createPending(path, 0o644)
	if err != nil {
		return 0, err
	}
	defer pf.discard()
	n, err := io.Copy(tagWrites{pf}, body)
	if err != nil {
		// Which side failed: the download, or the disk.
		var we *writeError
		if errors.As(err, &we) {
			return n, targetError(path, we.err)
		}
		return n, fmt.Errorf("downloading into %s: %w", path, err)
	}
	return n, pf.publish(replace)
}

// maxExportName bounds the file name export takes from the service, in
// bytes: with the longest extension added (".markdown") within the 255
// most file systems take.
const maxExportName = 240

// exportFileName is the name a document saved into a directory gets: the
// service's, when it is a plain name (no path, not hidden, no control
// characters, at most maxExportName bytes), else one made of the context's
// id (and version); either way ending in the format's extension.
func exportFileName(suggested, id string, version int, f exportFormat) string {
	name := suggested
	if !plainFileName(name) {
		name = fallbackName(id, version)
	}
	if !f.hasExt(name) {
		name += f.exts[0]
	}
	return name
}

// plainFileName reports whether name can be saved as it is in the user's
// directory: one path element, not "." or "..", not hidden, printable
// valid UTF-8 without characters that reorder text, and short.
func plainFileName(name string) bool {
	if name == "" || len(name) > maxExportName || !utf8.ValidString(name) ||
		strings.HasPrefix(name, ".") || strings.ContainsAny(name, `/\:`) {
		return false
	}
	for _, r := range name {
		if unsafeRune(r) {
			return false
		}
	}
	return true
}

// fallbackName is a file name made of a context's id: its letters, digits,
// "_" and "-", with "-vN" for an earlier version.
func fallbackName(id string, version int) string {
	stem := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, id)
	if len(stem) > 100 {
		stem = stem[:100]
	}
	if stem == "" {
		stem = "export"
	}
	if version > 0 {
		stem += fmt.Sprintf("-v%d", version)
	}
	return stem
}

// writeError is an error of the writing side of a copy.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// tagWrites marks its writer's errors as writeErrors, so a copy's error
// tells a full disk from a broken download.
type tagWrites struct{ w io.Writer }

func (t tagWrites) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		err = &writeError{err}
	}
	return n, err
}
