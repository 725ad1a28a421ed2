package browsertest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps chromedp out of the product: only this package's own
// files and _test.go files import github.com/chromedp/..., and only
// _test.go files and commands under internal/ import this package.
func TestImports(t *testing.T) {
	t.Parallel()
	const (
		module = "github.com/contextsvc/contextsvc-go"
		self   = module + "/internal/browsertest"
	)
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case strings.HasPrefix(p, "github.com/chromedp/") && !strings.HasPrefix(rel, "internal/browsertest/"):
				t.Errorf("%s imports %s: chromedp is for browser tests only (through internal/browsertest)", rel, p)
			case p == self && !strings.HasPrefix(rel, "internal/"):
				t.Errorf("%s imports %s: it is test support, for _test.go files and commands under internal/", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked %d files; is %s the module's root?", checked, root)
	}
}
