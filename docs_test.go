package contextsvc_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/jarcoal/httpmock"
)

// docFiles returns the README and every guide under docs/: the files whose
// Go snippets, tables and links the tests below keep honest.
func docFiles(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(guides) == 0 {
		t.Fatal("no guides under docs/")
	}
	return append([]string{"README.md", "CONTRIBUTING.md"}, guides...)
}

// readDoc reads one of docFiles.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocsCodeCompiles keeps the README and the guides honest: every Go
// code block in them must stand, line for line (indentation aside), in one
// of the compiled and tested example sources. A snippet that drifts from
// the API stops matching and fails here instead of failing a reader.
func TestDocsCodeCompiles(t *testing.T) {
	t.Parallel()
	var sources []string
	for _, pattern := range []string{"example_*_test.go", "examples/*/*.go", "mockserver/example*_test.go", "redisstore/example*_test.go", "contextsvcotel/example*_test.go", "internal/e2e/*_test.go"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sources = append(sources, "\n"+normalizeCode(string(b)))
		}
	}
	if len(sources) == 0 {
		t.Fatal("no example sources found")
	}

	goBlock := regexp.MustCompile("(?s)```go\n(.*?)```")
	for _, name := range docFiles(t) {
		doc := readDoc(t, name)
		blocks := goBlock.FindAllStringSubmatch(doc, -1)
		if name == "README.md" && len(blocks) < 5 {
			t.Errorf("README.md has %d Go code blocks; want one for each part (client, webhooks, mock server, fleet, observability)", len(blocks))
		}
		for i, b := range blocks {
			block := "\n" + normalizeCode(b[1])
			found := false
			for _, src := range sources {
				if strings.Contains(src, block) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: Go block %d is not in any example source (copy snippets from examples that run):\n%s", name, i+1, b[1])
			}
		}
	}

	readme := readDoc(t, "README.md")
	for _, cmd := range []string{"go run ./examples/quickstart", "go test github.com/contextsvc/contextsvc-go/..."} {
		if !strings.Contains(readme, cmd) {
			t.Errorf("README.md lacks the set-up command %q", cmd)
		}
	}
}

// normalizeCode drops indentation, trailing space and blank lines, so a
// snippet matches its source whatever its nesting depth there.
func normalizeCode(s string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestDocsRetryTable checks the client guide's retry table against the client:
// for every status from 400 to 599 and for a transport error, and for every
// method, the client retries exactly when the table's row for that answer
// (or its "anything else" row) names the method.
func TestDocsRetryTable(t *testing.T) {
	t.Parallel()
	const guide = "docs/client.md"
	doc := readDoc(t, guide)
	methods := []string{"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"}
	const transport = 0           // the answer "transport errors"
	retried := map[int][]string{} // answer -> methods the table retries
	var otherwise []string        // the "anything else" row
	haveOtherwise := false

	table := regexp.MustCompile(`(?s)\| answer \| retried for \|\n\|---\|---\|\n((?:\|[^\n]*\|\n)+)`).FindStringSubmatch(doc)
	if table == nil {
		t.Fatalf(`%s has no "| answer | retried for |" table`, guide)
	}
	status := regexp.MustCompile(`\b[1-5][0-9][0-9]\b`)
	for line := range strings.Lines(table[1]) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 2 {
			t.Fatalf("retry table row %q: want two cells", line)
		}
		answer, who := cells[0], cells[1]
		var ms []string
		switch {
		case strings.Contains(who, "every method"):
			ms = methods
		case strings.TrimSpace(who) == "never":
		default:
			words := regexp.MustCompile(`[A-Z]+`).FindAllString(who, -1)
			for _, m := range methods {
				if slices.Contains(words, m) {
					ms = append(ms, m)
				}
			}
			if len(ms) == 0 {
				t.Fatalf("retry table row %q names no method", line)
			}
		}
		var answers []int
		for _, s := range status.FindAllString(answer, -1) {
			n, _ := strconv.Atoi(s)
			answers = append(answers, n)
		}
		if strings.Contains(answer, "transport errors") {
			answers = append(answers, transport)
		}
		if strings.Contains(answer, "anything else") {
			otherwise, haveOtherwise = ms, true
		} else if len(answers) == 0 {
			t.Fatalf("retry table row %q names no answer", line)
		}
		for _, a := range answers {
			if _, dup := retried[a]; dup {
				t.Fatalf("retry table: answer %d in two rows", a)
			}
			retried[a] = ms
		}
	}
	if !haveOtherwise {
		t.Fatal(`retry table: no "anything else" row`)
	}

	answers := []int{transport}
	for s := 400; s <= 599; s++ {
		answers = append(answers, s)
	}
	for _, method := range methods {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			mt := httpmock.NewMockTransport()
			c, err := contextsvc.NewClient("sk_test", contextsvc.WithBaseURL("https://api.example.test/v1"),
				contextsvc.WithHTTPClient(&http.Client{Transport: mt}), contextsvc.WithRetryWait(0, 0), contextsvc.WithMaxRetries(1))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range answers {
				first := httpmock.NewErrorResponder(errors.New("connection reset by peer"))
				if a != transport {
					first = httpmock.NewStringResponder(a, `{}`)
				}
				calls := 0
				mt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
					calls++
					if calls == 1 {
						return first(r)
					}
					return httpmock.NewStringResponse(200, `{}`), nil
				})
				req, err := c.NewRequest(context.Background(), method, "/contexts/ctx_1", nil)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = c.Do(context.Background(), req, nil)
				ms, listed := retried[a]
				if !listed {
					ms = otherwise
				}
				if want := slices.Contains(ms, method); (calls == 2) != want {
					name := strconv.Itoa(a)
					if a == transport {
						name = "a transport error"
					}
					t.Errorf("%s after %s: %d attempts; %s's retry table says retried: %v", method, name, calls, guide, want)
				}
			}
		})
	}
}

// TestDocsPlanComments checks the numbers the docs' snippets give for a
// client's pacing (`WithPlan(contextsvc.ProPlan()), // pace to …`) against
// the bucket NewLocalLimiter builds: its rate per minute and its size, which is
// one token less than the plan's burst.
func TestDocsPlanComments(t *testing.T) {
	t.Parallel()
	plans := map[string]contextsvc.Plan{"Free": contextsvc.FreePlan(), "Pro": contextsvc.ProPlan(), "Business": contextsvc.BusinessPlan()}
	comment := regexp.MustCompile(`WithPlan\(contextsvc\.(\w+)Plan\(\)\)[^\n]*//([^\n]*)`)
	seen := 0
	for _, name := range docFiles(t) {
		for _, m := range comment.FindAllStringSubmatch(readDoc(t, name), -1) {
			seen++
			plan, ok := plans[m[1]]
			if !ok {
				t.Errorf("%s: WithPlan(contextsvc.%sPlan()): no such plan", name, m[1])
				continue
			}
			lim, err := contextsvc.NewLocalLimiter(plan)
			if err != nil {
				t.Fatal(err)
			}
			bucket := contextsvc.BucketSize(lim)
			for _, s := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
				if n, _ := strconv.Atoi(s); n != plan.PerMinute() && n != bucket {
					t.Errorf("%s: %q: %d is neither the rate per minute (%d) nor the bucket's size (%d)", name, strings.TrimSpace(m[0]), n, plan.PerMinute(), bucket)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no WithPlan snippet with a comment in README.md or docs/")
	}
}

// TestDocsLinks follows every relative link of the README and the guides:
// the file it names must exist and, for a heading anchor (#…), the file
// must have that heading, as GitHub names its anchors. Moving a section or
// renaming a heading cannot leave a dead link behind.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{} // file -> its heading anchors
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(b))
		anchors[file] = a
		return a
	}
	for _, name := range docFiles(t) {
		doc := stripCodeBlocks(readDoc(t, name))
		for _, m := range link.FindAllStringSubmatch(doc, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := name
			if file != "" {
				path = filepath.Join(filepath.Dir(name), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: %v", name, target, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				t.Errorf("%s: link %q: an anchor in a file that is not Markdown", name, target)
				continue
			}
			if !anchorsOf(path)[anchor] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", name, target, path, anchor)
			}
		}
	}
}

// stripCodeBlocks removes the fenced code blocks of a Markdown document,
// whose lines are neither headings nor links.
func stripCodeBlocks(doc string) string {
	return regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```[^\\n]*$").ReplaceAllString(doc, "")
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown document: the heading's text in lower case, without the
// characters that are not letters, digits, spaces, '-' or '_', spaces made
// '-', and "-1", "-2"… after a repeat.
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	count := map[string]int{}
	for line := range strings.Lines(stripCodeBlocks(doc)) {
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := count[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		count[a]++
	}
	return anchors
}

// TestREADMETour checks that the README is a front page a newcomer can
// find every part from: it links every guide under docs/, names every
// public package (each one recorded under api/) and every command, and
// stays short enough to read (about 1,500 words; the rest belongs in a
// guide).
func TestREADMETour(t *testing.T) {
	t.Parallel()
	readme := readDoc(t, "README.md")
	for _, guide := range docFiles(t)[1:] {
		if !strings.Contains(readme, "]("+filepath.ToSlash(guide)+")") {
			t.Errorf("README.md does not link the guide %s", guide)
		}
	}
	records, err := filepath.Glob("api/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := filepath.Glob("*/cmd/*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("cmd/*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(records) == 0 || len(cmds)+len(more) == 0 {
		t.Fatal("no api/ records or commands found")
	}
	// A package by its directory (api/mockserver-cmdline.txt records
	// mockserver/cmdline), a command by its name.
	var names []string
	for _, r := range records {
		names = append(names, strings.ReplaceAll(strings.TrimSuffix(filepath.Base(r), ".txt"), "-", "/"))
	}
	for _, c := range append(cmds, more...) {
		names = append(names, filepath.Base(filepath.Dir(c)))
	}
	for _, name := range names {
		if !strings.Contains(readme, "`"+name+"`") {
			t.Errorf("README.md does not name %s", name)
		}
	}
	if n := len(strings.Fields(readme)); n > 1500 {
		t.Errorf("README.md has %d words; keep it a front page of about 1,500 and move the rest to a guide", n)
	}
}
