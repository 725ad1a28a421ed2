package mockcmd

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// writeAuthFile writes an htpasswd file of user:bcrypt-hash lines (the
// lowest cost, for speed) for "user:password" pairs and returns its path.
func writeAuthFile(t *testing.T, pairs ...string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range pairs {
		user, pass, _ := strings.Cut(p, ":")
		h, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(user + ":" + string(h) + "\n")
	}
	path := filepath.Join(t.TempDir(), "admin.htpasswd")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunAdminAuthFile: with -admin-auth-file, the admin routes and the
// dashboard ask for a user and password (HTTP Basic), and the /v1 API
// keeps its key.
func TestRunAdminAuthFile(t *testing.T) {
	t.Parallel()
	base, _ := startCommand(t, "-admin-auth-file", writeAuthFile(t, "admin:s3cret"))
	root := strings.TrimSuffix(base, "/v1")
	get := func(path, user, pass string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", root+path, nil)
		if user != "" {
			req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	for _, path := range []string{"/_mock/clock", "/_mock/ui/"} {
		if res := get(path, "", ""); res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Basic realm=") {
			t.Errorf("%s without credentials: %d %q", path, res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}
		if res := get(path, "admin", "wrong"); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s with a wrong password: %d", path, res.StatusCode)
		}
		if res := get(path, "admin", "s3cret"); res.StatusCode != http.StatusOK {
			t.Errorf("%s with the password: %d", path, res.StatusCode)
		}
	}
	if r := send(t, "GET", base+"/contexts", "", ""); r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("/v1 without its key: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
}

// TestAdminExposureRefused: with the admin routes on, an -addr beyond
// loopback needs credentials or an explicit -admin-insecure; the refusal
// names the flags. A refused start listens on nothing (a test binds
// loopback only).
func TestAdminExposureRefused(t *testing.T) {
	t.Parallel()
	auth := writeAuthFile(t, "admin:s3cret")
	tests := []struct {
		args    []string
		refused bool
	}{
		{[]string{"-addr", "0.0.0.0:0"}, true},
		{[]string{"-addr", ":0"}, true},
		{[]string{"-addr", "[::]:0"}, true},
		{[]string{"-addr", "192.168.1.20:0"}, true},
		{[]string{"-addr", "0.0.0.0:0", "-admin=false"}, false},
		{[]string{"-addr", "0.0.0.0:0", "-admin-insecure"}, false},
		{[]string{"-addr", "0.0.0.0:0", "-admin-auth-file", auth}, false},
		{[]string{"-addr", "127.0.0.1:0"}, false},
		{[]string{"-addr", "localhost:0"}, false},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, io.Discard)
		if refused := err != nil; refused != tt.refused {
			t.Errorf("%q: refused %v, want %v: %v", tt.args, refused, tt.refused, err)
			continue
		}
		if !tt.refused {
			continue
		}
		msg := err.Error()
		for _, want := range []string{"-addr " + tt.args[1] + " listens beyond this machine", "-admin-auth-file FILE", "-admin=false", "-admin-insecure"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%q: the refusal %q does not say %q", tt.args, msg, want)
			}
		}
		if code := Run(t.Context(), tt.args, io.Discard, io.Discard); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", tt.args, code, exitUsage)
		}
	}
}

// TestBadAdminAuthFile: a credentials file that is missing or malformed
// stops the start with a usage error naming the file and what is wrong.
func TestBadAdminAuthFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.htpasswd")
	if err := os.WriteFile(bad, []byte("# admins\nadmin:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "-admin-auth-file: open " + filepath.Join(dir, "missing")},
		{bad, "contextsvc-mock: -admin-auth-file " + bad + `: admin credentials, line 2: user "admin": the password hash is not bcrypt's`},
	} {
		var stderr bytes.Buffer
		if code := Run(t.Context(), []string{"-addr", "127.0.0.1:0", "-admin-auth-file", tc.path}, io.Discard, &stderr); code != exitUsage ||
			!strings.Contains(stderr.String(), tc.want) {
			t.Errorf("-admin-auth-file %s: exit %d, stderr %q; want %d and %q", tc.path, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

// TestHashPassword: -hash-password prints a line -admin-auth-file takes,
// whose hash matches the password given on stdin. It hashes and checks at
// cost 10: seconds under the race detector.
func TestHashPassword(t *testing.T) {
	if testing.Short() {
		t.Skip("hashes at bcrypt cost 10; TestHashPasswordRefuses checks the refusals")
	}
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := runInput(t.Context(), []string{"-hash-password", "admin"}, strings.NewReader("a long passphrase\r\nignored\n"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	line := strings.TrimSuffix(stdout.String(), "\n")
	user, hash, _ := strings.Cut(line, ":")
	if user != "admin" || bcrypt.CompareHashAndPassword([]byte(hash), []byte("a long passphrase")) != nil || strings.Count(stdout.String(), "\n") != 1 {
		t.Fatalf("printed %q, want admin:<a hash of the first line>", stdout.String())
	}
	if cost, _ := bcrypt.Cost([]byte(hash)); cost != adminHashCost {
		t.Errorf("cost %d, want %d", cost, adminHashCost)
	}
	path := filepath.Join(t.TempDir(), "admin.htpasswd")
	if err := os.WriteFile(path, stdout.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseFlags([]string{"-admin-auth-file", path}, io.Discard); err != nil {
		t.Errorf("-admin-auth-file refuses the printed line: %v", err)
	}
}

// TestHashPasswordRefuses: with -hash-password, a missing password or a
// user name the file cannot hold is a usage error, and nothing is
// printed.
func TestHashPasswordRefuses(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	for _, tc := range []struct {
		user, stdin, want string
	}{
		{"admin", "", "give the password on stdin"},
		{"admin", "\n", "give the password on stdin"},
		{"a:b", "pw\n", `an admin user name must be 1 or more printable characters without ':', got "a:b"`},
		{"ad\tmin", "pw\n", `an admin user name must be 1 or more printable characters without ':', got "ad\tmin"`},
		{"admin", strings.Repeat("p", 73) + "\n", "password length exceeds 72 bytes"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := runInput(t.Context(), []string{"-hash-password", tc.user}, strings.NewReader(tc.stdin), &stdout, &stderr); code != exitUsage ||
			!strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("-hash-password %q with %q: exit %d, stdout %q, stderr %q; want %d and %q", tc.user, tc.stdin, code, stdout.String(), stderr.String(), exitUsage, tc.want)
		}
	}
}
