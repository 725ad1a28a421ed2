package apiguard

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the records in api/ from the code")

// load loads the module once for all the tests.
var load = sync.OnceValues(func() (*Module, error) { return Load(".") })

// TestAPI fails when the exported API of a public package differs from its
// record in api/, naming each difference and whether it is compatible.
// With -update it writes the records instead.
func TestAPI(t *testing.T) {
	t.Parallel()
	m, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Packages) == 0 {
		t.Fatal("no public package found")
	}
	const how = "If the change is deliberate, record it with `go test ./internal/tools/apiguard -update`, commit api/, and add a line to CHANGELOG.md."
	for _, p := range m.Packages {
		got, err := m.Record(p)
		if err != nil {
			t.Errorf("%s: %v", p.Path, err)
			continue
		}
		file := m.RecordPath(p)
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s has no record: api/%s is missing.\n%s", p.Path, p.Record, how)
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if changes := m.Diff(p.Path, want, got); len(changes) > 0 {
			t.Errorf("the exported API of %s differs from api/%s:\n%s%s", p.Path, p.Record, report(changes), how)
		}
	}
	stale, err := m.Stale()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		if *update {
			if err := os.Remove(filepath.Join(m.Root, "api", name)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("api/%s records a package the module no longer has (or no longer exports).\n%s", name, how)
	}
}

func report(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		kind := "incompatible"
		if c.Compatible {
			kind = "compatible"
		}
		fmt.Fprintf(&b, "\t%s: %s\n", kind, c.Message)
	}
	return b.String()
}

// TestDiffClassifies: the comparison names each change and tells a
// compatible one from one that breaks callers, through apidiff.
func TestDiffClassifies(t *testing.T) {
	t.Parallel()
	m, err := load()
	if err != nil {
		t.Fatal(err)
	}
	const old = `package p

import "context"

const Limit = 3

func Do(context.Context, string) error

type Options struct {
	Name string
	_    struct{}
}
`
	for _, tc := range []struct {
		name, new string
		want      []Change
	}{
		{"same", old, nil},
		{"added function", old + "\nfunc More() int\n", []Change{{"More: added", true}}},
		{"changed parameter", strings.Replace(old, "func Do(context.Context, string) error", "func Do(context.Context, int) error", 1),
			[]Change{{"Do: changed from func(context.Context, string) error to func(context.Context, int) error", false}}},
		{"removed field", strings.Replace(old, "\tName string\n", "", 1), []Change{{"Options.Name: removed", false}}},
		{"constant value", strings.Replace(old, "Limit = 3", "Limit = 4", 1), []Change{{"Limit: value changed from 3 to 4", false}}},
		{"text only", strings.Replace(old, "const Limit = 3", "const Limit = 3 // the most", 1), []Change{{"record text: + const Limit = 3 // the most", true}, {"record text: - const Limit = 3", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := m.Diff("example.com/p", []byte(old), []byte(tc.new))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Diff = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRecordCompiles: each record, as written, compiles back into a
// package with the same exported names as the code's.
func TestRecordCompiles(t *testing.T) {
	t.Parallel()
	m, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Packages {
		src, err := m.Record(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.check(p.Path, "new", src)
		if err != nil {
			t.Fatalf("%s: %v\n%s", p.Path, err, src)
		}
		var a, b bytes.Buffer
		for _, n := range p.Types.Scope().Names() {
			if p.Types.Scope().Lookup(n).Exported() {
				fmt.Fprintln(&a, n)
			}
		}
		for _, n := range got.Scope().Names() {
			if got.Scope().Lookup(n).Exported() {
				fmt.Fprintln(&b, n)
			}
		}
		if a.String() != b.String() {
			t.Errorf("%s: the record declares\n%s\nthe code\n%s", p.Path, &b, &a)
		}
	}
}

// TestRecordFoldsInternalAliases: a type of an internal package that a
// public package re-exports by an alias of its name is recorded as the
// type it names (its fields and methods, its name unqualified wherever the
// API mentions it), and a type of that package mentioned without such an
// alias is an error.
func TestRecordFoldsInternalAliases(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs := map[string]*types.Package{}
	check := func(path, src string) (*types.Package, error) {
		f, err := parser.ParseFile(fset, path+".go", src, 0)
		if err != nil {
			return nil, err
		}
		conf := types.Config{Importer: importerFunc(func(p string) (*types.Package, error) { return pkgs[p], nil })}
		p, err := conf.Check(path, fset, []*ast.File{f}, nil)
		pkgs[path] = p
		return p, err
	}
	if _, err := check("example.com/m/internal/model", `package model
type T struct {
	A int
	b int
}
func (T) M() string { return "" }
type U int
`); err != nil {
		t.Fatal(err)
	}
	m := &Module{Path: "example.com/m"}
	for _, tc := range []struct {
		name, src string
		want      []string
		err       string
	}{
		{"folded", `package p
import "example.com/m/internal/model"
type T = model.T
func F(model.T) []model.T { return nil }
`, []string{
			"// T = model.T (internal/model), an alias recorded as the type it names.\ntype T struct {\n\tA int\n\t_ struct{} // and unexported fields\n}\n\nfunc (T) M() string\n",
			"func F(T) []T\n",
		}, ""},
		{"not re-exported", `package p
import "example.com/m/internal/model"
type T = model.T
func G() model.U { return 0 }
`, nil, "model.U is in the API of example.com/m/p"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := check("example.com/m/p", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Record(Package{Path: p.Path(), Record: "p.txt", Types: p})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Record: %v, want an error with %q\n%s", err, tc.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(got), w) {
					t.Errorf("the record lacks\n%s\nin\n%s", w, got)
				}
			}
			if strings.Count(string(got), "model") != 2 {
				t.Errorf("the record qualifies a folded type:\n%s", got)
			}
		})
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
