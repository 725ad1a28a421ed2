package main

import (
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestUsageErrors: every mistake of the command line exits 2 with a
// message on stderr, and sends nothing.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"contexts", "lsit"}, "unknown command \"lsit\" for \"contextsvc contexts\"\n\nDid you mean this?\n\tlist\n"},
		{[]string{"contxts", "list"}, "Did you mean this?\n\tcontexts"},
		{[]string{"contexts", "lsit", "--limit", "5"}, "Did you mean this?\n\tlist"},
		{[]string{"contexts", "--nope"}, "unknown flag: --nope"},
		{[]string{"webhooks", "regster"}, "Did you mean this?\n\tregister"},
		{[]string{"contexts", "list", "--bogus"}, "unknown flag: --bogus"},
		// A mistyped flag after an id is the flag's error, not the id's.
		{[]string{"contexts", "get", "ctx_x", "--jsn"}, "unknown flag: --jsn\n"},
		{[]string{"contexts", "get", "ctx_x", "-Q"}, "unknown shorthand flag: 'Q' in -Q\n"},
		{[]string{"contexts", "update", "ctx_x", "--nmae", "x"}, "unknown flag: --nmae\n"},
		{[]string{"contexts", "delete", "ctx_x", "--jsn"}, "unknown flag: --jsn\n"},
		{[]string{"contexts", "versions", "ctx_x", "--al"}, "unknown flag: --al\n"},
		{[]string{"contexts", "export", "ctx_x", "--fromat", "pdf", "-o", "z.pdf"}, "unknown flag: --fromat\n"},
		{[]string{"webhooks", "register", "wh", "--ulr", "x"}, "unknown flag: --ulr\n"},
		{[]string{"contexts", "list", "--limit", "0"}, "--limit must be 1 to 100"},
		{[]string{"contexts", "list", "--json", "-q"}, "--json and --quiet cannot be used together: give one of them\n"},
		{[]string{"contexts", "get"}, "takes one argument, the context's id"},
		{[]string{"contexts", "get", "a", "b"}, "takes one argument"},
		{[]string{"contexts", "create", "--content", "x"}, `required flag(s) "name" not set`},
		{[]string{"contexts", "create", "--name", "x", "--content", "x", "--file", "-"}, "--content and --file cannot be used together"},
		{[]string{"contexts", "update", "ctx_x"}, "nothing to update"},
		{[]string{"contexts", "update", "ctx_x", "--tag", "a", "--clear-tags"}, "--clear-tags and --tag cannot be used together"},
		{[]string{"contexts", "export", "ctx_x", "--format", "docx", "-o", "-"}, "--format must be md, html, txt, pdf or json"},
		{[]string{"contexts", "export", "ctx_x", "--format", "pdf"}, `required flag(s) "output" not set`},
		{[]string{"webhooks", "register", "--url", "http://127.0.0.1:1/", "--event", "context.updatd"}, "did you mean context.updated?"},
		{[]string{"webhooks", "register", "--url", "http://127.0.0.1:1/"}, `required flag(s) "event" not set`},
		{[]string{"trigger"}, "trigger takes one argument, the event type"},
		{[]string{"trigger", "context.craeted"}, "did you mean context.created?"},
		{[]string{"listen", "--forward-to", "ftp://localhost:3000"}, "--forward-to must be an http or https URL, or host:port/path"},
		{[]string{"listen", "--forward-unverified"}, "--forward-unverified needs --forward-to"},
		{[]string{"listen", "--forward-to", "http://127.0.0.1:1/", "--secret", ""}, "--secret must be 1 to 256 characters"},
		{[]string{"snapshot"}, `required flag(s) "output" not set`},
		{[]string{"snapshot", "-o", "x.json", "--account", "no spaces"}, "--account"},
		{[]string{"contexts", "list", "--plan", "gold"}, `--plan: plan "gold" must be free, pro, business`},
		{[]string{"contexts", "list", "--base-url", "http://127.0.0.1:1/"}, "must end in /v1"},
		// An id the SDK refuses before sending is the user's to mend.
		{[]string{"contexts", "get", ".."}, `context id "..": a dot segment`},
		{[]string{"contexts", "versions", "ctx_a/b"}, `context id "ctx_a/b"`},
		{[]string{"contexts", "export", "ctx x", "-o", "-"}, `context id "ctx x"`},
	} {
		r := c.run(tt.args...)
		if r.code != exitUsage || r.out != "" || !strings.Contains(r.errOut, tt.stderr) || !strings.HasPrefix(r.errOut, "Error: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, r.code, r.out, r.errOut, tt.stderr)
		}
	}
	if n := len(ts.Contexts("acme")) + len(ts.Webhooks()); n != 0 {
		t.Errorf("usage errors created %d things", n)
	}

	// No key, no base URL: each names its variable.
	c.env = map[string]string{"CONTEXTSVC_BASE_URL": ts.URL}
	if r := c.run("contexts", "list"); r.code != exitUsage || !strings.Contains(r.errOut, "no API key: set CONTEXTSVC_API_KEY") {
		t.Errorf("no key: exit %d, %q", r.code, r.errOut)
	}
	c.env = map[string]string{"CONTEXTSVC_API_KEY": testKey}
	if r := c.run("contexts", "list"); r.code != exitUsage || !strings.Contains(r.errOut, "no base URL: set CONTEXTSVC_BASE_URL") {
		t.Errorf("no base URL: exit %d, %q", r.code, r.errOut)
	}
	// The flags stand in for the variables.
	if out := c.ok("contexts", "list", "--base-url", ts.URL, "--api-key", testKey); out != "No contexts.\n" {
		t.Errorf("with the flags: %q", out)
	}
}

// TestHelp: the root and a group show their commands; every flag of
// every command says its default (or that it is required), and help
// exits 0 on stdout.
func TestHelp(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	out := c.ok("--help")
	for _, want := range []string{"contexts", "webhooks", "listen", "trigger", "snapshot", "completion", "version", "CONTEXTSVC_API_KEY", "Exit status: 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
	if out := c.ok("contexts"); !strings.Contains(out, "Available Commands:") || !strings.Contains(out, "versions") {
		t.Errorf("contexts alone:\n%s", out)
	}
	// --json says what it prints: a page object only for lists.
	for cmd, want := range map[string]string{"create": "the new context", "get": "of the context", "list": "the page object", "versions": "the page object", "delete": `{"id","deleted"}`} {
		if out := c.ok("contexts", cmd, "--help"); !regexp.MustCompile(`--json +print [^\n]*`+regexp.QuoteMeta(want)).MatchString(out) || (!strings.Contains(want, "page") && strings.Contains(out, "page object")) {
			t.Errorf("contexts %s --help: --json does not say %q:\n%s", cmd, want, out)
		}
	}
	if out := c.ok("listen", "--help"); !regexp.MustCompile(`\n +--listen address +the receiver's address .*\(default "127\.0\.0\.1:0"\)\n`).MatchString(out) {
		t.Errorf("listen --help:\n%s", out)
	}

	root := newRootCmd(&streams{getenv: func(string) string { return "" }, in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.DisableFlagParsing {
			return // mock and conform: their own flags, checked below
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Value.Type() == "bool" {
				return
			}
			line := ""
			for l := range strings.Lines(cmd.Flags().FlagUsages()) {
				if strings.Contains(l, "--"+f.Name+" ") {
					line = l
				}
			}
			if !strings.Contains(line, "(default") && !strings.Contains(line, "(required)") {
				t.Errorf("%s --%s: its help says no default: %q", cmd.CommandPath(), f.Name, line)
			}
		})
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// TestColor: styles only on a terminal, none under NO_COLOR or TERM=dumb.
func TestColor(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	c.ok("contexts", "create", "--name", "A")
	for _, tt := range []struct {
		tty   bool
		env   map[string]string
		color bool
	}{
		{false, nil, false},
		{true, nil, true},
		{true, map[string]string{"NO_COLOR": "1"}, false},
		{true, map[string]string{"TERM": "dumb"}, false},
	} {
		c.tty = tt.tty
		c.env["NO_COLOR"], c.env["TERM"] = tt.env["NO_COLOR"], tt.env["TERM"]
		out := c.ok("contexts", "list")
		errOut := c.run("contexts", "get", "ctx_missing").errOut
		if got := strings.Contains(out, "\x1b[") && strings.Contains(errOut, "\x1b["); got != tt.color {
			t.Errorf("tty %t, env %v: styled %t:\n%q\n%q", tt.tty, tt.env, got, out, errOut)
		}
	}
}

// TestTerminalSafe: a name that holds an escape sequence does not reach
// the terminal as one.
func TestTerminalSafe(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	c.tty = true
	c.env["NO_COLOR"] = "1"
	// The mock refuses escapes (another server may not) but takes a
	// right-to-left override, and a carriage return in content.
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "evil\u202egpj.exe", "--content", "x\rover\u202e", "-q"))
	for _, out := range []string{c.ok("contexts", "list"), c.ok("contexts", "get", id), c.ok("contexts", "versions", id)} {
		if strings.ContainsAny(out, "\r\u202e") {
			t.Errorf("an escape reached the terminal: %q", out)
		}
	}
}

func TestCompletionAndVersion(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	for shell, want := range map[string]string{"bash": "__start_contextsvc", "zsh": "#compdef contextsvc", "fish": "complete -c contextsvc", "powershell": "Register-ArgumentCompleter"} {
		if out := c.ok("completion", shell); !strings.Contains(out, want) {
			t.Errorf("completion %s lacks %q", shell, want)
		}
	}
	// The completion of a context id lists the account's contexts.
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Completed", "-q"))
	if out := c.ok("__complete", "contexts", "get", ""); !strings.Contains(out, id+"\tCompleted") {
		t.Errorf("completing an id:\n%s", out)
	}
	if out := c.ok("__complete", "trigger", "context.up"); !strings.Contains(out, "context.updated") {
		t.Errorf("completing an event type:\n%s", out)
	}
	if out := c.ok("version"); !strings.HasPrefix(out, "contextsvc 1.0.0 (SDK contextsvc-go 1.0.0, go") {
		t.Errorf("version: %q", out)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(c.ok("version", "--json")), &v); err != nil || v["version"] == "" || v["sdk"] != "1.0.0" {
		t.Errorf("version --json: %v %v", v, err)
	}
	if out := c.ok("--version"); out != c.ok("version") {
		t.Errorf("--version: %q, version: %q", out, c.ok("version"))
	}
}
