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

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/jarcoal/httpmock"
)

// TestREADMECodeCompiles keeps the README honest: every Go code block in it
// must stand, line for line (indentation aside), in one of the compiled and
// tested example sources. A README snippet that drifts from the API stops
// matching and fails here instead of failing a reader.
func TestREADMECodeCompiles(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) < 4 {
		t.Fatalf("README.md has %d Go code blocks; expected the client, receiver and mock server examples", len(blocks))
	}

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
	for i, b := range blocks {
		block := "\n" + normalizeCode(string(b[1]))
		found := false
		for _, src := range sources {
			if strings.Contains(src, block) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README Go block %d is not in any example source (keep README snippets copied from examples):\n%s", i+1, b[1])
		}
	}

	for _, cmd := range []string{"go run ./examples/quickstart", "go test ./..."} {
		if !strings.Contains(string(readme), cmd) {
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

// TestREADMERetryTable checks the README's retry table against the client:
// for every status from 400 to 599 and for a transport error, and for every
// method, the client retries exactly when the table's row for that answer
// (or its "anything else" row) names the method.
func TestREADMERetryTable(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	methods := []string{"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"}
	const transport = 0           // the answer "transport errors"
	retried := map[int][]string{} // answer -> methods the table retries
	var otherwise []string        // the "anything else" row
	haveOtherwise := false

	table := regexp.MustCompile(`(?s)\| answer \| retried for \|\n\|---\|---\|\n((?:\|[^\n]*\|\n)+)`).FindSubmatch(readme)
	if table == nil {
		t.Fatal(`README.md has no "| answer | retried for |" table`)
	}
	status := regexp.MustCompile(`\b[1-5][0-9][0-9]\b`)
	for line := range strings.Lines(string(table[1])) {
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
					t.Errorf("%s after %s: %d attempts; the README's retry table says retried: %v", method, name, calls, want)
				}
			}
		})
	}
}

// TestREADMEPlanComments checks the numbers the README's snippets give for
// a client's pacing (`WithPlan(contextsvc.ProPlan()), // pace to …`) against
// the bucket NewLocalLimiter builds: its rate per minute and its size, which is
// one token less than the plan's burst.
func TestREADMEPlanComments(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	plans := map[string]contextsvc.Plan{"Free": contextsvc.FreePlan(), "Pro": contextsvc.ProPlan(), "Business": contextsvc.BusinessPlan()}
	comments := regexp.MustCompile(`WithPlan\(contextsvc\.(\w+)Plan\(\)\)[^\n]*//([^\n]*)`).FindAllStringSubmatch(string(readme), -1)
	if len(comments) == 0 {
		t.Fatal("README.md has no WithPlan snippet with a comment")
	}
	for _, m := range comments {
		plan, ok := plans[m[1]]
		if !ok {
			t.Errorf("README: WithPlan(contextsvc.%sPlan()): no such plan", m[1])
			continue
		}
		lim, err := contextsvc.NewLocalLimiter(plan)
		if err != nil {
			t.Fatal(err)
		}
		bucket := contextsvc.BucketSize(lim)
		for _, s := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			if n, _ := strconv.Atoi(s); n != plan.PerMinute() && n != bucket {
				t.Errorf("README: %q: %d is neither the rate per minute (%d) nor the bucket's size (%d)", strings.TrimSpace(m[0]), n, plan.PerMinute(), bucket)
			}
		}
	}
}
