package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver"
)

// TestWebhooksRegister registers a webhook with a secret of its own
// making, printed once, with which the deliveries are signed.
func TestWebhooksRegister(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	var status atomic.Int32
	status.Store(http.StatusOK)

	out := c.ok("webhooks", "register", "--url", "http://127.0.0.1:1/a", "--event", "context.created", "--event", "context.deleted")
	m := regexp.MustCompile(`^Registered (wh_[a-z0-9]+): context\.created, context\.deleted to http://127\.0\.0\.1:1/a\nSigning secret: (whsec_[a-z2-7]{32}) \(shown once: the API never returns it\)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("register printed %q", out)
	}
	app, got := newApp(t, m[2], &status)
	if _, err := ts.UpdateWebhook(m[1], mockserver.WebhookUpdate{URL: &app.URL}); err != nil {
		t.Fatal(err)
	}
	c.ok("contexts", "create", "--name", "Signed")
	if d := <-got; d.verified != nil {
		t.Errorf("the delivery does not verify with the printed secret: %v", d.verified)
	}

	// --json: the API's answer on stdout with the made-up secret in it,
	// which signs the deliveries; a given secret is not printed.
	r := c.run("webhooks", "register", "--url", "http://127.0.0.1:1/b", "--event", "export.completed", "--json")
	var wh struct {
		ID     string   `json:"id"`
		Events []string `json:"events"`
		Secret string   `json:"secret"`
	}
	if r.code != exitOK || json.Unmarshal([]byte(r.out), &wh) != nil || wh.ID == "" || !strings.HasPrefix(wh.Secret, "whsec_") || r.errOut != "" ||
		!strings.HasPrefix(r.out, `{"id":"`+wh.ID+`",`) {
		t.Fatalf("--json: exit %d, %q, %q", r.code, r.out, r.errOut)
	}
	app2, got2 := newApp(t, wh.Secret, &status)
	if _, err := ts.UpdateWebhook(wh.ID, mockserver.WebhookUpdate{URL: &app2.URL}); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Exported", "-q"))
	c.ok("contexts", "export", id, "--format", "md", "-o", filepath.Join(t.TempDir(), "x.md"))
	if d := <-got2; d.verified != nil {
		t.Errorf("the delivery does not verify with the secret of the JSON: %v", d.verified)
	}
	if r := c.run("webhooks", "register", "--url", "http://127.0.0.1:1/b", "--event", "export.completed", "--json", "--secret", "whsec_given"); strings.Contains(r.out, "whsec_given") {
		t.Errorf("--json with --secret printed it: %q", r.out)
	}
	out = c.ok("webhooks", "register", "--url", "http://bot:pa55@127.0.0.1:1/c?token=s3cret", "--event", "export.completed", "--secret", "whsec_mine")
	if strings.Contains(out, "whsec_mine") || strings.Contains(out, "Signing secret") || strings.Contains(out, "s3cret") || strings.Contains(out, "pa55") ||
		!strings.Contains(out, "to http://xxxxx@127.0.0.1:1/c?token=xxxxx\n") {
		t.Errorf("a given secret or the URL's token printed: %q", out)
	}
	if n := len(ts.Webhooks()); n != 4 {
		t.Errorf("%d webhooks", n)
	}
}

// TestProgress: snapshot draws its bar on stderr only when it is a
// terminal.
func TestProgress(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	c.ok("contexts", "create", "--name", "A")
	path := filepath.Join(t.TempDir(), "s.json")
	if r := c.run("snapshot", "-o", path); r.code != exitOK || r.errOut != "" {
		t.Errorf("off a terminal: exit %d, stderr %q", r.code, r.errOut)
	}
	c.tty = true
	if r := c.run("snapshot", "-o", path, "--force"); r.code != exitOK || !strings.Contains(r.errOut, "\r\x1b[KReading versions [") || !strings.Contains(r.errOut, "] 1/1 contexts") {
		t.Errorf("on a terminal: exit %d, stderr %q", r.code, r.errOut)
	}
}

// TestCell keeps a table's cells on one line and free of what would drive
// a terminal.
func TestCell(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 50, "plain"},
		{"two\nlines\ttab", 50, "two lines tab"},
		{"esc\x1b[2Jx", 50, "esc�[2Jx"},
		{"bell\x07 c1\u009b", 50, "bell� c1�"},
		{"rtl\u202eexe.pdf", 50, "rtl�exe.pdf"},
		{"bad\xffutf8", 50, "bad�utf8"},
		{strings.Repeat("é", 12), 10, strings.Repeat("é", 10) + "…"},
		{strings.Repeat("é", 10), 10, strings.Repeat("é", 10)},
	} {
		if got := cell(tt.in, tt.max); got != tt.want {
			t.Errorf("cell(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	if got := safeText("# T\n\n\tcode\x1b[31m\r"); got != "# T\n\n\tcode�[31m�" {
		t.Errorf("safeText: %q", got)
	}
}
