package contextsvc_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	for _, pattern := range []string{"example_*_test.go", "examples/*/*.go", "mockserver/example*_test.go", "redisstore/example*_test.go", "internal/e2e/*_test.go"} {
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
