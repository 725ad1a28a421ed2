package mockcmd_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockcmd"
)

// The guides that show the admin API (/_mock/…) with curl: the mock
// server's guide, and the conformance guide for the validating proxy.
const (
	mockGuide        = "../../../docs/mockserver.md"
	conformanceGuide = "../../../docs/conformance.md"
)

// readDoc reads one of the repository's guides.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// adminOperation is a method and a path template of the admin API, as the
// OpenAPI document writes them ("GET", "/_mock/events/{id}").
type adminOperation struct{ method, path string }

func (o adminOperation) String() string { return o.method + " " + o.path }

// adminOperations returns every admin operation of the mock's OpenAPI
// document, with the names of its query parameters.
func adminOperations(t *testing.T) map[adminOperation][]string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(mockserver.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	ops := map[adminOperation][]string{}
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/_mock/") {
			continue
		}
		for method, op := range item.Operations() {
			var query []string
			for _, ps := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, p := range ps {
					if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
						query = append(query, p.Value.Name)
					}
				}
			}
			ops[adminOperation{method, path}] = query
		}
	}
	if len(ops) < 20 {
		t.Fatalf("the OpenAPI document has %d admin operations; want every /_mock/ route", len(ops))
	}
	return ops
}

// guideSection returns the text of the section of doc under heading (a
// whole "## …" line), up to the next heading of its level.
func guideSection(t *testing.T, name, doc, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no heading %q", name, heading)
	}
	level := heading[:strings.IndexByte(heading, ' ')+1]
	if i := strings.Index(rest, "\n"+level); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// TestDocsAdminRouteTable checks the mock guide's table of admin routes
// against the OpenAPI document: every operation under /_mock/ is in it
// ("`GET`, `PATCH`, `DELETE /_mock/webhooks/{id}`" lists three), with each
// of its query parameters but the paging ones (limit, cursor) written
// after its path ("(`?account=`, `?order=desc`)"), and the table names no
// route or parameter the document does not have.
func TestDocsAdminRouteTable(t *testing.T) {
	t.Parallel()
	ops := adminOperations(t)
	section := guideSection(t, mockGuide, readDoc(t, mockGuide), "## The admin API")

	methodOnly := regexp.MustCompile(`^(GET|HEAD|POST|PUT|PATCH|DELETE)$`)
	route := regexp.MustCompile(`^(GET|HEAD|POST|PUT|PATCH|DELETE) (/_mock/\S*)$`)
	param := regexp.MustCompile(`^\?([A-Za-z]+)=`)
	code := regexp.MustCompile("`([^`]*)`")
	inTable := map[adminOperation]bool{}
	params := map[string][]string{} // path -> the query parameters written after it
	rows := 0
	for line := range strings.Lines(section) {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		rows++
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		var pending []string
		last := ""
		for _, m := range code.FindAllStringSubmatch(first, -1) {
			tok := m[1]
			switch {
			case methodOnly.MatchString(tok):
				pending = append(pending, tok)
			case route.MatchString(tok):
				r := route.FindStringSubmatch(tok)
				last = r[2]
				for _, method := range append(pending, r[1]) {
					op := adminOperation{method, last}
					if _, ok := ops[op]; !ok {
						t.Errorf("%s: the admin route table has %s, which the OpenAPI document does not serve", mockGuide, op)
					}
					inTable[op] = true
				}
				pending = nil
			case param.MatchString(tok):
				if last == "" {
					t.Errorf("%s: the admin route table has %q before any route", mockGuide, tok)
					continue
				}
				params[last] = append(params[last], param.FindStringSubmatch(tok)[1])
			}
		}
		if len(pending) > 0 {
			t.Errorf("%s: admin route table row %q: methods %v with no path after them", mockGuide, strings.TrimSpace(line), pending)
		}
	}
	if rows == 0 {
		t.Fatalf("%s: no admin route table under \"## The admin API\"", mockGuide)
	}

	documented := map[string][]string{} // path -> the query parameters of its operations
	for op, query := range ops {
		if !inTable[op] {
			t.Errorf("%s: the admin route table lacks %s", mockGuide, op)
		}
		for _, q := range query {
			if q == "limit" || q == "cursor" { // every list's, said once under the table
				continue
			}
			documented[op.path] = append(documented[op.path], q)
			if !slices.Contains(params[op.path], q) {
				t.Errorf("%s: the admin route table lacks the query parameter %q of %s (write `?%s=` after the path)", mockGuide, q, op, q)
			}
		}
	}
	for path, ps := range params {
		for _, q := range ps {
			if !slices.Contains(documented[path], q) {
				t.Errorf("%s: the admin route table gives %s the query parameter %q, which the OpenAPI document does not", mockGuide, path, q)
			}
		}
	}
}

// A curl session is a shell block of a guide made of curl commands,
// variable assignments (id=$(curl … | grep -o …) included) and comments,
// that calls the admin API: the test below runs it against the server the
// guide starts.
type curlSession struct {
	text string
	// stream is a lone "curl -N URL" that follows a stream: it never ends
	// by itself.
	stream bool
}

// curlSessions returns the curl sessions of a guide, in order.
func curlSessions(t *testing.T, guide string) []curlSession {
	t.Helper()
	var sessions []curlSession
	block := regexp.MustCompile("(?ms)^```sh\n(.*?)^```")
	for _, m := range block.FindAllStringSubmatch(readDoc(t, guide), -1) {
		cmds := shellCommands(m[1])
		runnable, admin := len(cmds) > 0, false
		for _, c := range cmds {
			words := shellWords(c)
			if len(words) > 0 && words[0] != "curl" && !allAssignments(words) {
				runnable = false
			}
			admin = admin || strings.Contains(c, "/_mock")
		}
		if runnable && admin {
			stream := len(cmds) == 1 && slices.Contains(shellWords(cmds[0]), "-N")
			sessions = append(sessions, curlSession{text: m[1], stream: stream})
		}
	}
	return sessions
}

// shellCommands returns the commands of a shell block: its lines, with a
// line ending in '\' joined to the next, without comments and blank lines.
func shellCommands(block string) []string {
	var cmds []string
	cur := ""
	for line := range strings.Lines(block) {
		line = strings.TrimRight(line, "\n")
		if strings.HasSuffix(line, `\`) {
			cur += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		line = cur + line
		cur = ""
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			cmds = append(cmds, t)
		}
	}
	return cmds
}

// shellWords splits a command into words as a shell would, enough for the
// guides' curl commands: quotes removed, a word ends at unquoted space, and
// the unquoted operators |, $( and ) are words of their own; a comment
// ends the command.
func shellWords(cmd string) []string {
	var words []string
	var b strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, b.String())
		}
		b.Reset()
		inWord = false
	}
	for i := 0; i < len(cmd); i++ {
		switch c := cmd[i]; {
		case c == '\'' || c == '"':
			end := strings.IndexByte(cmd[i+1:], c)
			if end < 0 {
				end = len(cmd) - i - 1
			}
			b.WriteString(cmd[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			flush()
			return words
		case c == '|' || c == ')':
			flush()
			words = append(words, string(c))
		case c == '$' && i+1 < len(cmd) && cmd[i+1] == '(':
			flush()
			words = append(words, "$(")
			i++
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

// allAssignments reports whether a command only sets variables (NAME=…,
// or NAME= followed by a command substitution).
func allAssignments(words []string) bool {
	assignment := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	depth := 0
	for _, w := range words {
		switch {
		case w == "$(":
			depth++
		case w == ")":
			depth--
		case depth == 0 && !assignment.MatchString(w):
			return false
		}
	}
	return true
}

// curlCalls returns the admin operations the curl commands of a session
// call, with the variables its assignments set expanded in their URLs
// (an id read from an answer, $ctx, stays a variable: it stands for a
// path parameter).
func curlCalls(session string) []adminOperation {
	vars := map[string]string{}
	variable := regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
	expand := func(s string) string {
		return variable.ReplaceAllStringFunc(s, func(v string) string {
			if val, ok := vars[variable.FindStringSubmatch(v)[1]]; ok {
				return val
			}
			return v
		})
	}
	var calls []adminOperation
	for _, cmd := range shellCommands(session) {
		words := shellWords(cmd)
		if allAssignments(words) {
			for i, w := range words {
				name, val, ok := strings.Cut(w, "=")
				fromCommand := i+1 < len(words) && words[i+1] == "$("
				if ok && !fromCommand && !strings.ContainsAny(name, "$()|") {
					vars[name] = expand(val)
				}
			}
		}
		// Each curl of the command, up to the operator that ends it.
		for i, w := range words {
			if w != "curl" {
				continue
			}
			end := len(words)
			for j := i + 1; j < len(words); j++ {
				if words[j] == "|" || words[j] == ")" || words[j] == "$(" {
					end = j
					break
				}
			}
			if op, ok := curlCall(words[i+1:end], expand); ok {
				calls = append(calls, op)
			}
		}
	}
	return calls
}

// curlCall returns the method and the /_mock/ path of one curl's
// arguments, as curl chooses the method: -X, else POST with a body, else
// GET.
func curlCall(args []string, expand func(string) string) (adminOperation, bool) {
	method, path := "", ""
	body := false
	for i, a := range args {
		switch {
		case a == "-X" || a == "--request":
			if i+1 < len(args) {
				method = args[i+1]
			}
		case strings.HasPrefix(a, "-X") && len(a) > 2:
			method = a[2:]
		case a == "-d" || strings.HasPrefix(a, "--data") || a == "--json":
			body = true
		case strings.Contains(expand(a), "://"):
			if u, err := url.Parse(expand(a)); err == nil && strings.HasPrefix(u.Path, "/_mock/") {
				path = u.Path
			}
		}
	}
	if path == "" {
		return adminOperation{}, false
	}
	if method == "" {
		method = "GET"
		if body {
			method = "POST"
		}
	}
	return adminOperation{method, path}, true
}

// matches reports whether the path a curl calls is an instance of the
// template ("/_mock/events/$evt" of "/_mock/events/{id}").
func (o adminOperation) matches(method, path string) bool {
	if o.method != method {
		return false
	}
	tmpl, got := strings.Split(o.path, "/"), strings.Split(path, "/")
	if len(tmpl) != len(got) {
		return false
	}
	for i := range tmpl {
		if strings.HasPrefix(tmpl[i], "{") && strings.HasSuffix(tmpl[i], "}") {
			if got[i] == "" {
				return false
			}
		} else if tmpl[i] != got[i] {
			return false
		}
	}
	return true
}

// TestDocsAdminCurlCoversEveryRoute checks that the guides' curl sessions
// call every admin operation of the OpenAPI document, so that each one has
// an example that TestDocsAdminCurl runs.
func TestDocsAdminCurlCoversEveryRoute(t *testing.T) {
	t.Parallel()
	var calls []adminOperation
	for _, guide := range []string{mockGuide, conformanceGuide} {
		for _, s := range curlSessions(t, guide) {
			calls = append(calls, curlCalls(s.text)...)
		}
	}
	var missing []string
	for op := range adminOperations(t) {
		if !slices.ContainsFunc(calls, func(c adminOperation) bool { return op.matches(c.method, c.path) }) {
			missing = append(missing, op.String())
		}
	}
	sort.Strings(missing)
	for _, op := range missing {
		t.Errorf("no curl session of %s or %s calls %s: give it an example there", mockGuide, conformanceGuide, op)
	}
}

// TestDocsAdminCurl runs the guides' curl sessions with bash and curl
// against the command contextsvc-mock started as each guide starts it (on
// a free port instead of 8080): the mock guide's with its keys and fake
// clock, the conformance guide's as a validating proxy in front of an
// upstream whose list answer breaks the document (so there is a finding to
// read). Every curl must succeed and its answer be a 2xx; a stream's must
// open with its "hello" event. Without bash or curl the test is skipped
// (with CI=true it fails).
func TestDocsAdminCurl(t *testing.T) {
	t.Parallel()
	for _, program := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(program); err != nil {
			missing := fmt.Sprintf("%s not found on PATH; to run this test: apt-get install %s", program, program)
			if os.Getenv("CI") != "" {
				t.Fatal(missing)
			}
			t.Skip(missing)
		}
	}
	// --fail-with-body (curl 7.76) fails on an answer of 400 or more and
	// still shows the error body, which says what is wrong.
	if err := exec.Command("curl", "--fail-with-body", "--version").Run(); err != nil {
		msg := "curl is older than 7.76 (no --fail-with-body): " + err.Error()
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}

	// The upstream's answer is short, so it goes with a Content-Length, and
	// its last bytes come with the end of its body: the proxy has checked
	// it before the caller has it, and the session's next command finds
	// the finding.
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[],"hasMore":false}`) // no nextCursor, no X-RateLimit-* headers
	}))
	t.Cleanup(upstream.Close)

	for _, g := range []struct {
		guide, start string
	}{
		{mockGuide, "go run ./mockserver/cmd/contextsvc-mock -key sk_test_demo:pro -fake-clock"},
		{conformanceGuide, "go run ./mockserver/cmd/contextsvc-mock -addr 127.0.0.1:8080 -upstream https://staging.example.com/v1"},
	} {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(g.guide, "../../../docs/"), ".md"), func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(readDoc(t, g.guide), g.start) {
				t.Fatalf("%s does not start the mock as %q: its curl sessions run against that", g.guide, g.start)
			}
			sessions := curlSessions(t, g.guide)
			if len(sessions) == 0 {
				t.Fatalf("%s has no curl session", g.guide)
			}
			args := strings.Fields(strings.TrimPrefix(g.start, "go run ./mockserver/cmd/contextsvc-mock "))
			for i := 0; i < len(args); i++ {
				switch args[i] {
				case "-addr":
					args = slices.Delete(args, i, i+2)
					i--
				case "-upstream":
					args[i+1] = upstream.URL + "/v1"
				}
			}
			hostPort := startMockCommand(t, append([]string{"-addr", "127.0.0.1:0"}, args...))
			for i, s := range sessions {
				script := strings.ReplaceAll(s.text, "127.0.0.1:8080", hostPort)
				if s.stream {
					runCurlStream(t, script)
					continue
				}
				// The user's ~/.curlrc and proxy settings are left out (-q,
				// --noproxy): the session talks to the mock on loopback.
				cmd := exec.Command("bash", "-c", "set -euxo pipefail\n"+
					`curl() { command curl -q --noproxy '*' --fail-with-body "$@"; }`+"\n"+script)
				cmd.Dir = t.TempDir()
				cmd.Env = append(os.Environ(), "CONTEXTSVC_API_KEY=sk_test_proxied")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: curl session %d failed (%v); its commands, as bash ran them, and their output:\n%s", g.guide, i+1, err, out)
				}
			}
		})
	}
}

// startMockCommand runs the command contextsvc-mock in this process with
// args, until the test ends, and returns the host:port it listens on.
func startMockCommand(t *testing.T, args []string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var logs lockedBuffer
	done := make(chan int, 1)
	go func() {
		code := mockcmd.Run(ctx, args, pw, &logs)
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("contextsvc-mock %s exited %d; its log:\n%s", strings.Join(args, " "), code, logs.String())
		}
	})
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("contextsvc-mock %s printed no base URL; its log:\n%s", strings.Join(args, " "), logs.String())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }() // the rest of stdout, if any
	base, ok := strings.CutPrefix(lines.Text(), "export CONTEXTSVC_BASE_URL=")
	u, err := url.Parse(base)
	if !ok || err != nil {
		t.Fatalf("contextsvc-mock printed %q first; want export CONTEXTSVC_BASE_URL=…", lines.Text())
	}
	return u.Host
}

// runCurlStream runs a session that follows a stream: it passes once the
// stream's "hello" event has come, and the curl is then stopped (by its
// process id).
func runCurlStream(t *testing.T, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "exec curl -q --noproxy '*' "+strings.TrimPrefix(strings.TrimSpace(script), "curl "))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	var seen []string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if lines.Text() == "event: hello" {
			return
		}
	}
	t.Errorf("%s: the stream ended without its hello event; it sent:\n%s\n%s", strings.TrimSpace(script), strings.Join(seen, "\n"), stderr.String())
}

// lockedBuffer is a strings.Builder safe for a writer and a reader on
// other goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
