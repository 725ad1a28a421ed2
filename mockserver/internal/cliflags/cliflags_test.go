package cliflags

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

type listValue []string

func (l *listValue) String() string     { return strings.Join(*l, ",") }
func (l *listValue) Set(v string) error { *l = append(*l, v); return nil }

func TestParseAndHelp(t *testing.T) {
	t.Parallel()
	newSet := func() *flag.FlagSet {
		fs := flag.NewFlagSet("demo", flag.ContinueOnError)
		fs.String("addr", "127.0.0.1:8080", "`address` to listen on")
		fs.String("file", "", "a `path`")
		fs.Bool("admin", true, "serve the admin routes")
		fs.Bool("quiet", false, "say less")
		fs.Duration("timeout", 10*time.Second, "how long")
		fs.Var(&listValue{}, "key", "a `KEY`, repeatable")
		return fs
	}
	for _, tt := range []struct {
		args          []string
		err           error // wanted, matched by errors.Is
		mistake       bool  // a usage mistake, returned unprinted
		stdout, wants string
	}{
		{args: []string{"-h"}, err: flag.ErrHelp, stdout: "Usage: demo\n" +
			"  --addr address\n    \taddress to listen on (default \"127.0.0.1:8080\")\n" +
			"  --admin\n    \tserve the admin routes (default true)\n" +
			"  --file path\n    \ta path\n" +
			"  --key KEY\n    \ta KEY, repeatable\n" +
			"  --quiet\n    \tsay less\n" +
			"  --timeout duration\n    \thow long (default 10s)\n"},
		{args: []string{"--help"}, err: flag.ErrHelp, wants: "  --addr address\n"},
		{args: []string{"--nope"}, mistake: true},
		{args: []string{"--addr", "x", "--key", "a", "-key", "b"}},
	} {
		var out bytes.Buffer
		err := Parse(newSet(), tt.args, &out, "Usage: demo\n")
		switch {
		case tt.err != nil && !errors.Is(err, tt.err),
			tt.err == nil && tt.mistake != (err != nil):
			t.Errorf("%q: %v", tt.args, err)
		}
		if tt.stdout != "" && out.String() != tt.stdout {
			t.Errorf("%q: help\n%s\nwant\n%s", tt.args, out.String(), tt.stdout)
		}
		if !strings.Contains(out.String(), tt.wants) || (tt.err == nil && out.Len() != 0) {
			t.Errorf("%q wrote %q", tt.args, out.String())
		}
	}
	var w bytes.Buffer
	Report(&w, "contextsvc mock", errors.New("flag provided but not defined: -nope"))
	if w.String() != "contextsvc mock: flag provided but not defined: -nope\nRun 'contextsvc mock --help' for usage.\n" {
		t.Errorf("Report: %q", w.String())
	}
}
