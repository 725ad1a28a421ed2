package main

import (
	"io"
	"strings"
	"testing"
)

// TestJQ: --jq filters the JSON of every command that prints JSON, with
// jq's language: strings print without quotes, other values as compact
// JSON for scripts and indented on a terminal; a bad expression is a
// usage error before anything is sent.
func TestJQ(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	a := strings.TrimSpace(c.ok("contexts", "create", "--name", "Alpha", "--tag", "ops", "-q"))
	b := strings.TrimSpace(c.ok("contexts", "create", "--name", "Beta\u202egpj.exe", "-q"))
	for _, tt := range []struct {
		args []string
		tty  bool
		code int
		out  string
		err  string
	}{
		{args: []string{"contexts", "list", "--jq", ".data[].id"}, out: a + "\n" + b + "\n"},
		{args: []string{"contexts", "list", "--all", "--limit", "1", "--jq", ".data[0].name"}, out: "Alpha\nBeta\u202egpj.exe\n"},
		{args: []string{"contexts", "list", "--json", "--jq", ".data | length"}, out: "2\n"},
		{args: []string{"contexts", "get", a, "--jq", "{name, version, tags}"}, out: `{"name":"Alpha","tags":["ops"],"version":1}` + "\n"},
		{args: []string{"contexts", "get", a, "--jq", "{name, version}"}, tty: true, out: "{\n  \"name\": \"Alpha\",\n  \"version\": 1\n}\n"},
		// A string on a terminal cannot drive it.
		{args: []string{"contexts", "get", b, "--jq", ".name"}, tty: true, out: "Beta�gpj.exe\n"},
		{args: []string{"contexts", "get", b, "--jq", ".name"}, out: "Beta\u202egpj.exe\n"},
		{args: []string{"contexts", "versions", a, "--jq", ".data[] | [.version, .createdBy] | @tsv"}, out: "1\tuser_"},
		{args: []string{"contexts", "update", a, "--name", "Alpha 2", "--jq", ".version"}, out: "2\n"},
		{args: []string{"contexts", "create", "--name", "Gamma", "--jq", ".name"}, out: "Gamma\n"},
		{args: []string{"webhooks", "register", "--url", "http://127.0.0.1:1/", "--event", "context.created", "--jq", ".secret"}, out: "whsec_"},
		{args: []string{"contexts", "get", a, "--jq", "empty"}, out: ""},
		// Mistakes.
		{args: []string{"contexts", "create", "--name", "Never", "--jq", ".["}, code: exitUsage, err: "Error: --jq: "},
		{args: []string{"contexts", "list", "--jq", "nosuchfunction(1)"}, code: exitUsage, err: "Error: --jq: function not defined: nosuchfunction/1"},
		{args: []string{"contexts", "list", "-q", "--jq", ".data"}, code: exitUsage, err: "Error: --jq and --quiet cannot be used together: give one of them\n"},
		{args: []string{"contexts", "get", a, "--jq", `.name, error("stop")`}, code: exitError, out: "Alpha 2\n", err: "Error: --jq: error: stop\n"},
	} {
		c.tty = tt.tty
		c.env["NO_COLOR"] = "1"
		r := c.run(tt.args...)
		if r.code != tt.code || !strings.HasPrefix(r.out, tt.out) || (tt.out == "" && r.out != "") || !strings.Contains(r.errOut, tt.err) || (tt.err == "" && r.errOut != "") {
			t.Errorf("%q (tty %t): exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, tt.tty, r.code, r.out, r.errOut, tt.code, tt.out, tt.err)
		}
	}
	for _, x := range ts.Contexts("acme") {
		if x.Name == "Never" {
			t.Error("a bad --jq still created the context")
		}
	}
}

// largestWrite records the largest single write it is given.
type largestWrite struct {
	n, largest int
}

func (w *largestWrite) Write(p []byte) (int, error) {
	w.n += len(p)
	w.largest = max(w.largest, len(p))
	return len(p), nil
}

// TestJQStreams: --jq writes each value as the expression yields it, so an
// expression that yields a great many holds a small buffer, not all of
// them.
func TestJQStreams(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	c.ok("contexts", "create", "--name", "Alpha", "-q")
	out := &largestWrite{}
	s := &streams{in: strings.NewReader(""), out: out, err: io.Discard, getenv: c.getenv}
	if code := run(t.Context(), []string{"contexts", "list", "--jq", "range(200000)"}, s); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if out.n < 1_000_000 || out.largest > 64<<10 {
		t.Errorf("%d bytes written, the largest write %d bytes: want them written as they come", out.n, out.largest)
	}
}
