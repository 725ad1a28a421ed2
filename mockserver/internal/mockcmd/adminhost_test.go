package mockcmd

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRunAdminHost: the command's admin routes answer to loopback names
// and the names given with -admin-host; a request with any other Host (a
// page that re-pointed its own name at the mock) is a 403 whose message
// says which flag to add.
func TestRunAdminHost(t *testing.T) {
	t.Parallel()
	base, _ := startCommand(t, "-admin-host", "mock", "-admin-host", ".lan.example")
	root := strings.TrimSuffix(base, "/v1")
	get := func(host string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", root+"/_mock/clock", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var e struct{ Error struct{ Message string } }
		_ = json.Unmarshal(b, &e)
		return res.StatusCode, e.Error.Message
	}
	for _, host := range []string{"mock:8080", "devbox.lan.example", "localhost:8080", "127.0.0.1"} {
		if status, msg := get(host); status != http.StatusOK {
			t.Errorf("Host %s: %d %s", host, status, msg)
		}
	}
	status, msg := get("attacker.example:8080")
	if status != http.StatusForbidden || !strings.Contains(msg, "-admin-host attacker.example") {
		t.Errorf("Host attacker.example: %d %q, want a 403 that names -admin-host attacker.example", status, msg)
	}
}

// TestBadAdminHostFlag: a name with a port, or that is no host name, is a
// usage error that says what is wrong.
func TestBadAdminHostFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg, msg string
	}{
		{"mock:8080", "without a port"},
		{"http://mock", "without a port"},
		{"", "a host name of 1 to 253"},
		{"*.example.com", "holds only"},
	} {
		var stderr bytes.Buffer
		if code := Run(t.Context(), []string{"-admin-host", tc.arg}, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("-admin-host %q: exit %d, stderr %q", tc.arg, code, stderr.String())
		}
	}
}
