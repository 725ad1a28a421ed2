package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/cmdline"
)

// TestPassthrough: contextsvc mock and contextsvc conform are the two
// commands' own code: the same help (on stdout, flags with two dashes),
// the same usage errors (one line and where the help is), exit codes.
func TestPassthrough(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	for _, tt := range []struct {
		name string
		run  func(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int
	}{{"mock", cmdline.Mock}, {"conform", cmdline.Conform}} {
		for _, args := range [][]string{{"-h"}, {"--help"}, {"-nope"}, {"--nope"}, {"extra"}} {
			var out, errOut bytes.Buffer
			code := tt.run(t.Context(), "contextsvc "+tt.name, args, &out, &errOut)
			r := c.run(append([]string{tt.name}, args...)...)
			if r.code != code || r.out != out.String() || r.errOut != errOut.String() {
				t.Errorf("%s %q: exit %d, stdout %q, stderr %q; the command itself: %d, %q, %q", tt.name, args, r.code, r.out, r.errOut, code, out.String(), errOut.String())
			}
		}
		var help bytes.Buffer
		tt.run(t.Context(), "contextsvc "+tt.name, []string{"-h"}, &help, io.Discard)
		if r := c.run("help", tt.name); r.code != exitOK || r.out != help.String() || r.errOut != "" {
			t.Errorf("help %s: exit %d, %q, %q", tt.name, r.code, r.out, r.errOut)
		}
		if !strings.HasPrefix(help.String(), "Usage: contextsvc "+tt.name+" [flags]\n") || regexp.MustCompile(`\n  -[^-]`).MatchString(help.String()) ||
			!strings.Contains(help.String(), "\n  --") {
			t.Errorf("%s --help: not its name, or flags with one dash:\n%s", tt.name, help.String())
		}
		// A mistake is one line and where the help is, not the help.
		r := c.run(tt.name, "--nope")
		if r.code != exitUsage || r.out != "" || r.errOut != "contextsvc "+tt.name+": flag provided but not defined: -nope\nRun 'contextsvc "+tt.name+" --help' for usage.\n" {
			t.Errorf("%s --nope: exit %d, %q, %q", tt.name, r.code, r.out, r.errOut)
		}
	}
	if out := c.ok("--help"); !strings.Contains(out, "\n  mock ") || !strings.Contains(out, "\n  conform ") {
		t.Errorf("--help does not list mock and conform:\n%s", out)
	}
	if r := c.run("mock", "--chaos", "duplicate=2"); r.code != exitUsage ||
		r.errOut != "contextsvc mock: invalid value \"duplicate=2\" for flag -chaos: duplicate: 2 is not a probability from 0 to 1\nRun 'contextsvc mock --help' for usage.\n" {
		t.Errorf("mock --chaos duplicate=2: exit %d, %q", r.code, r.errOut)
	}
	if r := c.run("mock", "-h"); !strings.Contains(r.out, "--state-file") || !strings.Contains(r.out, `(default "127.0.0.1:8080")`) {
		t.Errorf("mock -h:\n%s", r.out)
	}
}
