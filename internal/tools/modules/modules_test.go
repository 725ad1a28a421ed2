package modules

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// rootPath is the path of the repository's root module, the SDK; every
// other module's path begins with it.
const rootPath = "github.com/contextsvc/contextsvc-go"

// goCmd runs the go command in dir with env added to the test's own, and
// returns its standard output; it fails t with the command's stderr.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return string(out)
}

// module is one module of the workspace.
type module struct {
	Path string
	Dir  string
}

// workspace lists the modules of the repository's workspace (go.work),
// the root module first.
var workspace = sync.OnceValues(func() ([]module, error) {
	out, err := exec.Command("go", "list", "-m", "-json").Output()
	if err != nil {
		return nil, err
	}
	var mods []module
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m module
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	slices.SortFunc(mods, func(a, b module) int { return strings.Compare(a.Path, b.Path) })
	if len(mods) < 2 || mods[0].Path != rootPath {
		return nil, errors.New("go list -m does not list the repository's modules: run the tests in its workspace (go.work at its root), not with GOWORK=off")
	}
	return mods, nil
})

func modules(t *testing.T) []module {
	t.Helper()
	mods, err := workspace()
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// sdkRequires are the root module's requirements: what the SDK needs at
// run time (go-retryablehttp, with go-cleanhttp under it, x/time and
// go-json-experiment) and what its tests need (go-cmp, httpmock). Nothing
// of the mock, the commands, Redis or OpenTelemetry.
var sdkRequires = []string{
	"github.com/go-json-experiment/json",
	"github.com/google/go-cmp",
	"github.com/hashicorp/go-cleanhttp // indirect",
	"github.com/hashicorp/go-retryablehttp",
	"github.com/jarcoal/httpmock",
	"golang.org/x/time",
}

// TestRootRequirements holds the root module's go.mod to the SDK's list.
// A requirement added there reaches every application that imports the
// SDK, in its build list and in the versions it selects.
func TestRootRequirements(t *testing.T) {
	t.Parallel()
	root := modules(t)[0]
	var mod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal([]byte(goCmd(t, root.Dir, nil, "mod", "edit", "-json")), &mod); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range mod.Require {
		if r.Indirect {
			r.Path += " // indirect"
		}
		got = append(got, r.Path)
	}
	slices.Sort(got)
	if !slices.Equal(got, sdkRequires) {
		t.Errorf("the root module (the SDK) requires\n\t%s\nwant\n\t%s\nWhat another part needs goes in that part's module (its own go.mod); see CONTRIBUTING.md.",
			strings.Join(got, "\n\t"), strings.Join(sdkRequires, "\n\t"))
	}
}

// consumer writes a module that requires the SDK (replaced by this
// checkout), and others at the versions given, and imports the packages
// given; it returns its directory.
func consumer(t *testing.T, requires map[string]string, imports ...string) string {
	t.Helper()
	dir := t.TempDir()
	var mod strings.Builder
	mod.WriteString("module example.com/consumer\n\ngo 1.26.0\n\nrequire (\n\t" + rootPath + " v1.1.0\n")
	for path, v := range requires {
		mod.WriteString("\t" + path + " " + v + "\n")
	}
	mod.WriteString(")\n\nreplace " + rootPath + " => " + modules(t)[0].Dir + "\n")
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, p := range imports {
		src.WriteString("\t_ \"" + p + "\"\n")
	}
	src.WriteString(")\n\nfunc main() {}\n")
	for name, text := range map[string]string{"go.mod": mod.String(), "main.go": src.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// standalone is the environment of a go command run in a consumer: its
// own module, outside the workspace, free to update its go.mod.
var standalone = []string{"GOWORK=off", "GOFLAGS=-mod=mod"}

// sdkBuildList is the build list of an application that imports the SDK
// alone, after go mod tidy: itself, the SDK, the modules the SDK compiles
// (go-retryablehttp, go-cleanhttp, x/time, go-json-experiment), the two its
// tests use (go-cmp, httpmock), and the requirements go-retryablehttp's
// go.mod states for its own tests (go-hclog, with fatih/color,
// go-colorable, go-isatty and x/sys under it), which graph pruning keeps
// in the list though nothing compiles them.
var sdkBuildList = []string{
	"example.com/consumer",
	"github.com/contextsvc/contextsvc-go",
	"github.com/fatih/color",
	"github.com/go-json-experiment/json",
	"github.com/google/go-cmp",
	"github.com/hashicorp/go-cleanhttp",
	"github.com/hashicorp/go-hclog",
	"github.com/hashicorp/go-retryablehttp",
	"github.com/jarcoal/httpmock",
	"github.com/mattn/go-colorable",
	"github.com/mattn/go-isatty",
	"golang.org/x/sys",
	"golang.org/x/time",
}

// TestSDKConsumerBuildList: an application that imports only the SDK
// carries the SDK's modules and nothing of the rest of the repository
// (before the modules were split it carried 57, OpenTelemetry, gRPC,
// go-redis, cobra and chromedp among them).
func TestSDKConsumerBuildList(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("resolves a consumer module with the go command; skipped with -short")
	}
	dir := consumer(t, nil, rootPath)
	goCmd(t, dir, standalone, "mod", "tidy")
	got := strings.Split(strings.TrimSpace(goCmd(t, dir, standalone, "list", "-m", "-f", "{{.Path}}", "all")), "\n")
	if !slices.Equal(got, sdkBuildList) {
		t.Errorf("an application importing only the SDK has the build list\n\t%s\nwant\n\t%s",
			strings.Join(got, "\n\t"), strings.Join(sdkBuildList, "\n\t"))
	}
}

// TestSDKKeepsConsumerVersions: an application that pinned go-redis,
// cobra and OpenTelemetry at older versions keeps them when it adds the
// SDK; minimal version selection raised them to the repository's own
// while the SDK's module required them.
func TestSDKKeepsConsumerVersions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("resolves a consumer module with the go command; skipped with -short")
	}
	pinned := map[string]string{
		"github.com/redis/go-redis/v9": "v9.7.0",
		"github.com/spf13/cobra":       "v1.8.0",
		"go.opentelemetry.io/otel":     "v1.30.0",
	}
	dir := consumer(t, pinned, rootPath)
	for path, want := range pinned {
		if got := strings.TrimSpace(goCmd(t, dir, standalone, "list", "-m", "-f", "{{.Version}}", path)); got != want {
			t.Errorf("with the SDK added, %s is at %s; the application pinned %s", path, got, want)
		}
	}
}

// TestNoInternalAcrossModules: no package (or test) of one module imports
// an internal package of another. The modules are versioned apart, so an
// internal package is free to change under every module but its own;
// what two share is public API of the lower one or a copy in each (see
// TestCopiesIdentical).
func TestNoInternalAcrossModules(t *testing.T) {
	t.Parallel()
	mods := modules(t)
	owner := func(pkg string) string {
		best := ""
		for _, m := range mods {
			if (pkg == m.Path || strings.HasPrefix(pkg, m.Path+"/")) && len(m.Path) > len(best) {
				best = m.Path
			}
		}
		return best
	}
	for _, m := range mods {
		out := goCmd(t, m.Dir, nil, "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
		dec := json.NewDecoder(strings.NewReader(out))
		for dec.More() {
			var p struct {
				ImportPath                         string
				Imports, TestImports, XTestImports []string
			}
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
				o := owner(imp)
				if o == "" || o == m.Path {
					continue
				}
				rel := strings.TrimPrefix(imp, o+"/")
				if rel == "internal" || strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/") {
					t.Errorf("%s (module %s) imports %s, an internal package of module %s", p.ImportPath, m.Path, imp, o)
				}
			}
		}
	}
}

// copies are the small internal packages that more than one module needs,
// each kept as a copy in every module that uses it, by the directory of
// each copy. The first is the one to change; the others follow it.
var copies = map[string][]string{
	"benchtest": {"internal/benchtest", "contextsvcotel/internal/benchtest"},
	"interrupt": {"mockserver/internal/interrupt", "cmd/internal/interrupt"},
	"otelkit":   {"contextsvcotel/internal/otelkit", "mockserver/internal/otelkit"},
	"syncbuf":   {"internal/syncbuf", "mockserver/internal/syncbuf", "cmd/internal/syncbuf"},
	"testproc":  {"mockserver/internal/testproc", "redisstore/internal/testproc", "cmd/internal/testproc"},
}

// TestCopiesIdentical holds each copy of a shared internal package to its
// first, file for file, so a fix made in one reaches all.
func TestCopiesIdentical(t *testing.T) {
	t.Parallel()
	root := modules(t)[0].Dir
	for name, dirs := range copies {
		want := readDir(t, filepath.Join(root, dirs[0]))
		if len(want) == 0 {
			t.Errorf("%s: %s has no files", name, dirs[0])
		}
		for _, d := range dirs[1:] {
			got := readDir(t, filepath.Join(root, d))
			for f, text := range want {
				if g, ok := got[f]; !ok {
					t.Errorf("%s: %s lacks %s of %s", name, d, f, dirs[0])
				} else if g != text {
					t.Errorf("%s: %s/%s differs from %s/%s (cp -r %s/. %s)", name, d, f, dirs[0], f, dirs[0], d)
				}
			}
			for f := range got {
				if _, ok := want[f]; !ok {
					t.Errorf("%s: %s has %s, which %s has not", name, d, f, dirs[0])
				}
			}
		}
	}
}

// readDir returns the files of dir by name.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}
