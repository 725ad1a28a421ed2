package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// exportServer is a server whose export answers what a test says: its
// body, Content-Type and Content-Disposition. It records the format of
// each export asked for.
type exportServer struct {
	mu      sync.Mutex
	formats []string
}

func newExportServer(t *testing.T, body, ctype, disposition string) (*cli, *exportServer) {
	t.Helper()
	es := &exportServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/export") {
			http.NotFound(w, r)
			return
		}
		es.mu.Lock()
		es.formats = append(es.formats, r.URL.Query().Get("format"))
		es.mu.Unlock()
		w.Header().Set("Content-Type", ctype)
		if disposition != "" {
			w.Header().Set("Content-Disposition", disposition)
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return &cli{t: t, env: map[string]string{"CONTEXTSVC_BASE_URL": srv.URL + "/v1", "CONTEXTSVC_API_KEY": testKey}}, es
}

func (es *exportServer) asked() []string {
	es.mu.Lock()
	defer es.mu.Unlock()
	return slices.Clone(es.formats)
}

// dirFiles lists the names in dir.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestExportIntoDirectory: the name a server suggests is kept to a plain
// name in the directory with the format's extension, or made of the id;
// a file that is there is never replaced without --force.
func TestExportIntoDirectory(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		disposition string
		format      string
		want        string // the file written in the directory
	}{
		{"a plain name", `attachment; filename="Runbook-v3.pdf"`, "pdf", "Runbook-v3.pdf"},
		{"a build file", `attachment; filename="Makefile"`, "pdf", "Makefile.pdf"},
		{"a path out of the directory", `attachment; filename="../../Makefile"`, "pdf", "Makefile.pdf"},
		{"a Windows path", `attachment; filename="..\\..\\conftest.py"`, "md", "conftest.py.md"},
		{"a hidden file", `attachment; filename=".bashrc"`, "txt", "bashrc.txt"},
		{"dots alone", `attachment; filename=".."`, "pdf", "ctx_1.pdf"},
		{"another extension", `attachment; filename="package.json"`, "html", "package.json.html"},
		{"the extension in capitals", `attachment; filename="Report.PDF"`, "pdf", "Report.PDF"},
		{"a long extension form", `attachment; filename="notes.markdown"`, "md", "notes.markdown"},
		{"control characters", "attachment; filename*=UTF-8''a%1B%5D0%3Btitle%07b.pdf", "pdf", "a]0;titleb.pdf"},
		{"a right-to-left override", "attachment; filename*=UTF-8''evil%E2%80%AEfdp.exe", "pdf", "evilfdp.exe.pdf"},
		{"a name too long", `attachment; filename="` + strings.Repeat("x", 240) + `.pdf"`, "pdf", "ctx_1.pdf"},
		{"none", "", "json", "ctx_1.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := newExportServer(t, "the document", "application/octet-stream", tt.disposition)
			dir := t.TempDir()
			bystander := filepath.Join(dir, "Makefile")
			os.WriteFile(bystander, []byte("all:\n"), 0o644)
			r := c.run("contexts", "export", "ctx_1", "--format", tt.format, "-o", dir)
			if r.code != exitOK || r.out != "Wrote "+filepath.Join(dir, tt.want)+" (12 bytes, application/octet-stream)\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %s written", r.code, r.out, r.errOut, tt.want)
			}
			if got := dirFiles(t, dir); !slices.Equal(got, sortedNames("Makefile", tt.want)) {
				t.Errorf("the directory holds %q", got)
			}
			if b, _ := os.ReadFile(bystander); string(b) != "all:\n" {
				t.Errorf("the Makefile became %q", b)
			}

			// Again: the file is there now, so it stays, unless --force.
			os.WriteFile(filepath.Join(dir, tt.want), []byte("mine"), 0o644)
			r = c.run("contexts", "export", "ctx_1", "--format", tt.format, "-o", dir)
			if r.code != exitError || r.out != "" || !strings.Contains(r.errOut, tt.want+" exists: it was left as it is (--force replaces it)") {
				t.Errorf("onto an existing file: exit %d, stdout %q, stderr %q", r.code, r.out, r.errOut)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, tt.want)); string(b) != "mine" {
				t.Errorf("the existing file became %q", b)
			}
			c.ok("contexts", "export", "ctx_1", "--format", tt.format, "-o", dir, "--force")
			if b, _ := os.ReadFile(filepath.Join(dir, tt.want)); string(b) != "the document" {
				t.Errorf("--force: the file holds %q", b)
			}
			if got := dirFiles(t, dir); len(got) != 2 {
				t.Errorf("the directory holds %q (a temporary file left?)", got)
			}
		})
	}
}

func sortedNames(names ...string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}

// TestExportToFile: -o FILE takes the format from its extension, refuses
// a --format that contradicts it, and never replaces a file without
// --force (nothing is asked of the server then).
func TestExportToFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file, format string
		code         int
		wantFormat   string // asked of the server
		stderr       string
	}{
		{"y.pdf", "", exitOK, "pdf", ""},
		{"y.PDF", "", exitOK, "pdf", ""},
		{"y.md", "", exitOK, "markdown", ""},
		{"y.markdown", "", exitOK, "markdown", ""},
		{"y.html", "", exitOK, "html", ""},
		{"y.htm", "", exitOK, "html", ""},
		{"y.txt", "", exitOK, "text", ""},
		{"y.json", "", exitOK, "json", ""},
		{"notes", "", exitOK, "markdown", ""},
		{"notes", "pdf", exitOK, "pdf", ""},
		{"y.pdf", "pdf", exitOK, "pdf", ""},
		{"y.md", "markdown", exitOK, "markdown", ""},
		{"y.txt", "text", exitOK, "text", ""},
		{"y.pdf", "md", exitUsage, "", "--format md contradicts -o "},
		{"y.md", "pdf", exitUsage, "", "whose extension .md means md: name a .pdf file or leave out --format"},
		{"y.json", "html", exitUsage, "", "contradicts"},
		{"y.docx", "", exitUsage, "", ".docx is not the extension of an export's format"},
		{"y.docx", "html", exitOK, "html", ""},
	} {
		t.Run(tt.file+"/"+tt.format, func(t *testing.T) {
			t.Parallel()
			c, es := newExportServer(t, "the document", "text/plain", `attachment; filename="other.txt"`)
			path := filepath.Join(t.TempDir(), tt.file)
			args := []string{"contexts", "export", "ctx_1", "-o", path}
			if tt.format != "" {
				args = append(args, "--format", tt.format)
			}
			r := c.run(args...)
			if r.code != tt.code || !strings.Contains(r.errOut, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.errOut, tt.code, tt.stderr)
			}
			if got := es.asked(); tt.code == exitOK && !slices.Equal(got, []string{tt.wantFormat}) || tt.code != exitOK && len(got) != 0 {
				t.Errorf("the server was asked for %q", got)
			}
			if tt.code != exitOK {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("a refused export wrote %s", path)
				}
				return
			}
			// The file is there now: it stays, and nothing is asked.
			os.WriteFile(path, []byte("mine"), 0o644)
			r = c.run(args...)
			if b, _ := os.ReadFile(path); r.code != exitError || string(b) != "mine" || !strings.Contains(r.errOut, path+" exists") || len(es.asked()) != 1 {
				t.Errorf("onto an existing file: exit %d, %q, the file holds %q, %d requests", r.code, r.errOut, b, len(es.asked()))
			}
			c.ok(append(args, "--force")...)
			if b, _ := os.ReadFile(path); string(b) != "the document" {
				t.Errorf("--force: the file holds %q", b)
			}
		})
	}
}

// TestExportToTerminal: on a terminal, a PDF is refused unless --raw and
// a text loses what would drive the terminal; off one, the bytes are
// written as they came.
func TestExportToTerminal(t *testing.T) {
	t.Parallel()
	const hostile = "# Title\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m\r\nnext\tline\u009b31m\x1bPq#0;2;0;0;0\x1b\\ end\u202e\n"
	const shown = "# Titlered\nnext\tline end\uFFFD\n"
	const pdf = "%PDF-1.4\n\x00\x01\x1b[2J binary"
	for _, tt := range []struct {
		name   string
		body   string
		args   []string
		tty    bool
		code   int
		out    string
		stderr string
	}{
		{"text on a terminal", hostile, []string{"--format", "md"}, true, exitOK, shown, "Left out 7 control sequences or characters"},
		{"text on a terminal, --raw", hostile, []string{"--format", "md", "--raw"}, true, exitOK, hostile, ""},
		{"text to a pipe", hostile, []string{"--format", "md"}, false, exitOK, hostile, ""},
		{"the default format on a terminal", hostile, nil, true, exitOK, shown, ""},
		{"a PDF on a terminal", pdf, []string{"--format", "pdf"}, true, exitUsage, "", "stdout is a terminal, which a PDF would garble"},
		{"a PDF on a terminal, --raw", pdf, []string{"--format", "pdf", "--raw"}, true, exitOK, pdf, ""},
		{"a PDF to a pipe", pdf, []string{"--format", "pdf"}, false, exitOK, pdf, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, es := newExportServer(t, tt.body, "text/markdown; charset=utf-8", "")
			c.tty = tt.tty
			r := c.run(append([]string{"contexts", "export", "ctx_1", "-o", "-"}, tt.args...)...)
			if r.code != tt.code || r.out != tt.out || !strings.Contains(r.errOut, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q and %q", r.code, r.out, r.errOut, tt.code, tt.out, tt.stderr)
			}
			if tt.code != exitOK && len(es.asked()) != 0 {
				t.Error("a refused export was asked of the server")
			}
		})
	}
}
