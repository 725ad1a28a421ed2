package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/cmdline"
)

// TestPassthrough: contextsvc mock and contextsvc conform are the two
// commands' own code: the same help, the same usage errors, exit codes.
func TestPassthrough(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	for _, tt := range []struct {
		name string
		run  func(ctx context.Context, args []string, stdout, stderr io.Writer) int
	}{{"mock", cmdline.Mock}, {"conform", cmdline.Conform}} {
		for _, args := range [][]string{{"-h"}, {"--help"}, {"-nope"}, {"extra"}} {
			var out, errOut bytes.Buffer
			code := tt.run(t.Context(), args, &out, &errOut)
			r := c.run(append([]string{tt.name}, args...)...)
			if r.code != code || r.out != out.String() || r.errOut != errOut.String() {
				t.Errorf("%s %q: exit %d, stdout %q, stderr %q; the command itself: %d, %q, %q", tt.name, args, r.code, r.out, r.errOut, code, out.String(), errOut.String())
			}
		}
		var help bytes.Buffer
		tt.run(t.Context(), []string{"-h"}, io.Discard, &help)
		if r := c.run("help", tt.name); r.code != exitOK || r.errOut != help.String() {
			t.Errorf("help %s: exit %d, %q", tt.name, r.code, r.errOut)
		}
	}
	if out := c.ok("--help"); !strings.Contains(out, "\n  mock ") || !strings.Contains(out, "\n  conform ") {
		t.Errorf("--help does not list mock and conform:\n%s", out)
	}
	if r := c.run("mock", "-h"); !strings.Contains(r.errOut, "-state-file") || !strings.Contains(r.errOut, `(default "127.0.0.1:8080")`) {
		t.Errorf("mock -h:\n%s", r.errOut)
	}
}
