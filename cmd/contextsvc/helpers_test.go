package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/cmd/internal/syncbuf"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

const testKey = "sk_test_cli_0123456789"

// cli runs the command in-process against a mock.
type cli struct {
	t   *testing.T
	env map[string]string
	tty bool // stdout and stderr are terminals
}

// newCLI starts a mock with the test key (unlimited, account acme) and
// returns it with a cli whose environment points at it.
func newCLI(t *testing.T, opts ...mockserver.Option) (*cli, *mockserver.TestServer) {
	t.Helper()
	opts = append([]mockserver.Option{mockserver.WithKey(mockserver.Key{Token: testKey, Plan: mockserver.PlanUnlimited, Account: "acme"})}, opts...)
	ts := mockserver.NewTestServer(t, opts...)
	return &cli{t: t, env: map[string]string{"CONTEXTSVC_BASE_URL": ts.URL, "CONTEXTSVC_API_KEY": testKey}}, ts
}

// result is what a run printed and its exit code.
type result struct {
	code        int
	out, errOut string
}

// run runs args with stdin.
func (c *cli) runIn(stdin string, args ...string) result {
	c.t.Helper()
	var out, errOut bytes.Buffer
	s := &streams{in: strings.NewReader(stdin), out: &out, err: &errOut, getenv: c.getenv, outTTY: c.tty, errTTY: c.tty}
	code := run(c.t.Context(), args, s)
	r := result{code, out.String(), errOut.String()}
	if strings.Contains(r.out+r.errOut, testKey) {
		c.t.Errorf("contextsvc %s: the output shows the API key:\n%s\n%s", strings.Join(args, " "), r.out, r.errOut)
	}
	return r
}

func (c *cli) run(args ...string) result {
	c.t.Helper()
	return c.runIn("", args...)
}

// ok runs args and fails the test unless they exit 0.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != exitOK {
		c.t.Fatalf("contextsvc %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.out, r.errOut)
	}
	return r.out
}

func (c *cli) getenv(k string) string { return c.env[k] }

// bgRun is a command running in-process in the background.
type bgRun struct {
	t           *testing.T
	out, errOut *syncbuf.Buffer
	done        chan struct{}
	code        int
	cancel      context.CancelFunc
}

// background runs args in-process; stop cancels its context (as Ctrl-C
// does) and returns its exit code.
func (c *cli) background(args ...string) *bgRun {
	c.t.Helper()
	ctx, cancel := context.WithCancel(c.t.Context())
	b := &bgRun{t: c.t, out: &syncbuf.Buffer{}, errOut: &syncbuf.Buffer{}, done: make(chan struct{}), cancel: cancel}
	s := &streams{in: strings.NewReader(""), out: b.out, err: b.errOut, getenv: c.getenv}
	go func() {
		defer close(b.done)
		b.code = run(ctx, args, s)
	}()
	c.t.Cleanup(func() { b.stop() })
	return b
}

// wait waits until the command has printed text on stdout; it fails the
// test if the command ends first.
func (b *bgRun) wait(text string) {
	b.t.Helper()
	select {
	case <-b.out.Seen(text):
	case <-b.done:
		select {
		case <-b.out.Seen(text):
		default:
			b.t.Fatalf("the command ended (exit %d) before printing %q\nstdout:\n%s\nstderr:\n%s", b.code, text, b.out, b.errOut)
		}
	}
}

// stop cancels the command's context and returns its exit code.
func (b *bgRun) stop() int {
	b.cancel()
	<-b.done
	return b.code
}

// rewritingProxy starts a proxy to the server at base (a /v1 URL) that
// replaces old with new in every answer's body, and returns its /v1 URL:
// a server that answers what the mock never would.
func rewritingProxy(t *testing.T, base, old, new string) string {
	t.Helper()
	target, err := url.Parse(strings.TrimSuffix(base, "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(old), []byte(new))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)
	return proxy.URL + "/v1"
}
