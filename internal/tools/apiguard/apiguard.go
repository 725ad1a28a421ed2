// Package apiguard keeps the repository's exported API from changing by
// accident. The API of every public package (every package of each of the
// repository's modules that is neither a command nor under an internal/
// directory) is recorded in the repository's api/, one text file per
// package, and TestAPI fails when the code's API differs from
// its record, naming each difference and whether it is compatible, as
// golang.org/x/exp/apidiff classifies it.
//
// A record reads like the package's declarations with their bodies left
// out, sorted: constants with their values, variables, functions, then
// each type with its methods. Parameters are unnamed (renaming one changes
// nothing for a caller), a struct lists its exported fields and ends in a
// blank field when it has unexported ones, and an unexported type the API
// mentions is declared at the end as opaque. The record is Go source, so
// the test compiles it back into a package for apidiff.
//
// A public package may re-export a type of one of the module's internal
// packages with an alias of the same name (type Delivery = model.Delivery):
// the record declares it as the type it names, fields and methods, as if
// it were defined in the public package, so a change to the internal type
// is a change to the public API the record shows, and a comment above it
// says it is an alias. Every type of that internal package the API
// mentions must then be re-exported so.
//
// Changing the API is a deliberate act: regenerate the records with
//
//	go test ./internal/tools/apiguard -update
//
// commit them with the change, and add a line to CHANGELOG.md.
package apiguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/constant"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/exp/apidiff"
)

// Package is one public package of the module.
type Package struct {
	// Path is the import path.
	Path string
	// Record is the name of its record in api/, e.g. "contextsvc.txt".
	Record string
	// Types is the package as the compiler sees it.
	Types *types.Package
}

// Module is the repository's public packages, loaded from their compiled
// export data, and an importer that resolves every package their API
// mentions.
type Module struct {
	// Root is the repository's directory, which holds api/.
	Root string
	// Path is the path of the repository's root module; the other modules'
	// paths begin with it.
	Path string
	// Packages are the public packages, in go list's order.
	Packages []Package
	fset     *token.FileSet
	imp      types.Importer
}

// listed is what go list says of a package.
type listed struct {
	ImportPath string
	Name       string
	Export     string
}

// Load loads the public packages of the repository that dir is in: of
// every module of its workspace (go.work), or of its one module when there
// is no workspace. Records are named and kept relative to the repository's
// root module, so a package keeps its record whichever module holds it.
// The go command (go list -export) compiles what it needs.
func Load(dir string) (*Module, error) {
	out, err := goCmd(dir, "env", "GOWORK")
	if err != nil {
		return nil, err
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	if strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == "off" {
		if out, err = goCmd(dir, "list", "-m", "-f", "{{.Dir}}"); err != nil {
			return nil, err
		}
		root = strings.TrimSpace(string(out))
	}
	out, err = goCmd(root, "list", "-m", "-json")
	if err != nil {
		return nil, err
	}
	// In a workspace go list -m lists every module; the root module is the
	// one in the workspace's own directory.
	m := &Module{Root: root, fset: token.NewFileSet()}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var mod struct{ Path, Dir string }
		if err := dec.Decode(&mod); err != nil {
			return nil, fmt.Errorf("apiguard: go list -m: %w", err)
		}
		if filepath.Clean(mod.Dir) == filepath.Clean(root) {
			m.Path = mod.Path
		}
	}
	if m.Path == "" {
		return nil, fmt.Errorf("apiguard: no module has its root in %s", root)
	}

	// The public packages: not commands, not internal, in any module.
	pkgs, err := goList(m.Root, m.Path+"/...")
	if err != nil {
		return nil, err
	}
	var public []string
	for _, p := range pkgs {
		rel := relPath(m.Path, p.ImportPath)
		if p.Name == "main" || rel == "internal" || strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/") || strings.HasSuffix(rel, "/internal") {
			continue
		}
		public = append(public, p.ImportPath)
	}

	// Their export data, and that of everything they import.
	deps, err := goList(m.Root, append([]string{"-export", "-deps"}, public...)...)
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	names := map[string]string{}
	for _, p := range deps {
		exports[p.ImportPath] = p.Export
		names[p.ImportPath] = p.Name
	}
	m.imp = &lockedImporter{imp: importer.ForCompiler(m.fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("apiguard: no export data for %s (the module does not build it)", path)
		}
		return os.Open(f)
	})}
	for _, path := range public {
		tp, err := m.imp.Import(path)
		if err != nil {
			return nil, fmt.Errorf("apiguard: importing %s: %w", path, err)
		}
		m.Packages = append(m.Packages, Package{Path: path, Record: RecordName(m.Path, path, names[path]), Types: tp})
	}
	return m, nil
}

// lockedImporter lets the tests share one importer (and so one set of
// imported packages) from several goroutines.
type lockedImporter struct {
	mu  sync.Mutex
	imp types.Importer
}

func (l *lockedImporter) Import(path string) (*types.Package, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.imp.Import(path)
}

// RecordName is the file in api/ recording the package at path: the
// package's directory in the module with "/" as "-", or the package's name
// for the module's root package.
func RecordName(modPath, pkgPath, name string) string {
	rel := relPath(modPath, pkgPath)
	if rel == "" {
		return name + ".txt"
	}
	return strings.ReplaceAll(rel, "/", "-") + ".txt"
}

// relPath is pkgPath relative to the module path ("" for the root).
func relPath(modPath, pkgPath string) string {
	if pkgPath == modPath {
		return ""
	}
	return strings.TrimPrefix(pkgPath, modPath+"/")
}

// goList runs go list -json with args in dir.
func goList(dir string, args ...string) ([]listed, error) {
	out, err := goCmd(dir, append([]string{"list", "-json=ImportPath,Name,Export"}, args...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("apiguard: go list: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// goCmd runs the go command (the one running the tests: go test puts its
// own first in PATH) and returns its standard output.
func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apiguard: go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// Record is the text recording p's exported API.
func (m *Module) Record(p Package) ([]byte, error) {
	w := &writer{pkg: p.Types, imports: map[string]string{}, opaque: map[string]*types.TypeName{}}
	w.findFolded(m.Path)
	body := w.declarations()
	if w.err != nil {
		return nil, w.err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// The exported API of %s, recorded by\n// go test ./internal/tools/apiguard -update (see internal/tools/apiguard). Not compiled.\n\n", p.Path)
	fmt.Fprintf(&b, "package %s\n\n", p.Types.Name())
	paths := make([]string, 0, len(w.imports))
	for path := range w.imports {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	// The standard library first, as goimports groups them.
	std := func(path string) bool { return !strings.Contains(strings.Split(path, "/")[0], ".") }
	slices.SortStableFunc(paths, func(a, b string) int {
		switch {
		case std(a) && !std(b):
			return -1
		case !std(a) && std(b):
			return 1
		}
		return 0
	})
	if len(paths) > 0 {
		b.WriteString("import (\n")
		for i, path := range paths {
			if i > 0 && std(paths[i-1]) && !std(path) {
				b.WriteString("\n")
			}
			if name := w.imports[path]; name != path[strings.LastIndex(path, "/")+1:] {
				fmt.Fprintf(&b, "\t%s %q\n", name, path)
			} else {
				fmt.Fprintf(&b, "\t%q\n", path)
			}
		}
		b.WriteString(")\n\n")
	}
	b.WriteString(body)
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("apiguard: the record of %s is not valid Go: %w\n%s", p.Path, err, b.Bytes())
	}
	return src, nil
}

// writer writes the declarations of a package's API.
type writer struct {
	pkg     *types.Package
	imports map[string]string // path → name, of the packages the API mentions
	opaque  map[string]*types.TypeName
	// folded are the internal packages whose types the package
	// re-exports by aliases of the same name, and folds those aliases.
	folded  map[*types.Package]bool
	folds   map[*types.TypeName]bool
	modPath string
	err     error
}

// findFolded notes the exported aliases of the package that name a type of
// an internal package of the module (modPath) by its own name: the record
// declares them as the types they name, and names that package's types
// without a qualifier.
func (w *writer) findFolded(modPath string) {
	w.folded, w.folds, w.modPath = map[*types.Package]bool{}, map[*types.TypeName]bool{}, modPath
	scope := w.pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || !tn.Exported() || !tn.IsAlias() {
			continue
		}
		named, ok := types.Unalias(tn.Type()).(*types.Named)
		if !ok || named.Obj().Pkg() == nil || named.Obj().Name() != name || !internalOf(modPath, named.Obj().Pkg().Path()) {
			continue
		}
		w.folded[named.Obj().Pkg()] = true
		w.folds[named.Obj()] = true
	}
}

// internalOf reports whether path is an internal package of the module
// modPath.
func internalOf(modPath, path string) bool {
	rel, ok := strings.CutPrefix(path, modPath+"/")
	return ok && (rel == "internal" || strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/") || strings.HasSuffix(rel, "/internal"))
}

func (w *writer) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("apiguard: "+format, args...)
	}
}

// qualify names another package by its name, noting the import.
func (w *writer) qualify(p *types.Package) string {
	if p == w.pkg || w.folded[p] {
		return ""
	}
	for path, name := range w.imports {
		if name == p.Name() && path != p.Path() {
			w.fail("%s and %s are both named %s in the API of %s", path, p.Path(), name, w.pkg.Path())
		}
	}
	w.imports[p.Path()] = p.Name()
	return p.Name()
}

// typ writes t as a Go type expression, noting the unexported types of the
// package it mentions.
func (w *writer) typ(t types.Type) string {
	w.noteOpaque(t, map[types.Type]bool{})
	if sig, ok := t.(*types.Signature); ok {
		return "func" + w.signature(sig)
	}
	return types.TypeString(t, w.qualify)
}

// noteOpaque records the unexported named types of the package that t
// mentions, to declare them as opaque.
func (w *writer) noteOpaque(t types.Type, seen map[types.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Named:
		if obj := t.Obj(); obj.Pkg() == w.pkg && !obj.Exported() {
			w.opaque[obj.Name()] = obj
		} else if w.folded[obj.Pkg()] && !w.folds[obj] {
			w.fail("%s.%s is in the API of %s, which re-exports other types of %s by aliases: re-export it too (type %s = %s.%s)",
				obj.Pkg().Name(), obj.Name(), w.pkg.Path(), obj.Pkg().Path(), obj.Name(), obj.Pkg().Name(), obj.Name())
		}
		for a := range t.TypeArgs().Types() {
			w.noteOpaque(a, seen)
		}
	case *types.Alias:
		w.noteOpaque(types.Unalias(t), seen)
	case *types.Pointer:
		w.noteOpaque(t.Elem(), seen)
	case *types.Slice:
		w.noteOpaque(t.Elem(), seen)
	case *types.Array:
		w.noteOpaque(t.Elem(), seen)
	case *types.Chan:
		w.noteOpaque(t.Elem(), seen)
	case *types.Map:
		w.noteOpaque(t.Key(), seen)
		w.noteOpaque(t.Elem(), seen)
	case *types.Signature:
		for v := range t.Params().Variables() {
			w.noteOpaque(v.Type(), seen)
		}
		for v := range t.Results().Variables() {
			w.noteOpaque(v.Type(), seen)
		}
	case *types.Struct:
		for f := range t.Fields() {
			w.noteOpaque(f.Type(), seen)
		}
	case *types.Interface:
		for m := range t.Methods() {
			w.noteOpaque(m.Type(), seen)
		}
	}
}

// signature writes a signature without its parameters' names:
// "[T any](string, ...Option) (*Client, error)".
func (w *writer) signature(sig *types.Signature) string {
	var b strings.Builder
	if tps := sig.TypeParams(); tps.Len() > 0 {
		b.WriteString(w.typeParams(tps))
	}
	b.WriteByte('(')
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			b.WriteString("..." + w.typ(t.(*types.Slice).Elem()))
		} else {
			b.WriteString(w.typ(t))
		}
	}
	b.WriteByte(')')
	switch res := sig.Results(); res.Len() {
	case 0:
	case 1:
		b.WriteString(" " + w.typ(res.At(0).Type()))
	default:
		b.WriteString(" (")
		for i := range res.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(w.typ(res.At(i).Type()))
		}
		b.WriteByte(')')
	}
	return b.String()
}

// typeParams writes "[K comparable, V any]".
func (w *writer) typeParams(tps *types.TypeParamList) string {
	parts := make([]string, tps.Len())
	for i := range tps.Len() {
		tp := tps.At(i)
		parts[i] = tp.Obj().Name() + " " + w.typ(tp.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// declarations writes the package's exported declarations, then the
// opaque unexported types they mention.
func (w *writer) declarations() string {
	scope := w.pkg.Scope()
	var consts, vars, funcs, typs []string
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			consts = append(consts, w.constDecl(obj))
		case *types.Var:
			vars = append(vars, "var "+name+" "+w.typ(obj.Type()))
		case *types.Func:
			funcs = append(funcs, "func "+name+w.signature(obj.Signature()))
		case *types.TypeName:
			typs = append(typs, w.typeDecl(obj))
		}
	}
	var b strings.Builder
	for _, group := range [][]string{consts, vars, funcs, typs} {
		for _, d := range group {
			b.WriteString(d)
			b.WriteString("\n")
		}
		if len(group) > 0 {
			b.WriteString("\n")
		}
	}
	if len(w.opaque) > 0 {
		b.WriteString("// Unexported types the API mentions, without their contents.\n")
		names := make([]string, 0, len(w.opaque))
		for name := range w.opaque {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			tn := w.opaque[name]
			tparams := ""
			if n, ok := tn.Type().(*types.Named); ok && n.TypeParams().Len() > 0 {
				tparams = w.typeParams(n.TypeParams())
			}
			fmt.Fprintf(&b, "type %s%s struct{ _ [0]func() }\n", name, tparams)
		}
	}
	return b.String()
}

// constDecl writes "const Name Type = value" ("const Name = value" when
// untyped).
func (w *writer) constDecl(c *types.Const) string {
	val := c.Val()
	var v string
	switch val.Kind() {
	case constant.Float:
		f, _ := constant.Float64Val(val)
		v = strconv.FormatFloat(f, 'g', -1, 64)
	default:
		v = val.ExactString()
	}
	if b, ok := c.Type().(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		return "const " + c.Name() + " = " + v
	}
	decl := "const " + c.Name() + " " + w.typ(c.Type()) + " = " + v
	if n, ok := c.Type().(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Duration" {
		if d, ok := constant.Int64Val(val); ok {
			decl += " // " + time.Duration(d).String()
		}
	}
	return decl
}

// typeDecl writes a type with its exported methods; a folded alias is
// written as the type it names.
func (w *writer) typeDecl(tn *types.TypeName) string {
	var b strings.Builder
	if tn.IsAlias() {
		named, ok := types.Unalias(tn.Type()).(*types.Named)
		if !ok || !w.folds[named.Obj()] {
			return "type " + tn.Name() + " = " + w.typ(types.Unalias(tn.Type()))
		}
		fmt.Fprintf(&b, "// %s = %s.%s (%s), an alias recorded as the type it names.\n",
			tn.Name(), named.Obj().Pkg().Name(), named.Obj().Name(), relPath(w.modPath, named.Obj().Pkg().Path()))
		tn = named.Obj()
	}
	named, ok := tn.Type().(*types.Named)
	if !ok {
		w.fail("%s: a type name of a %T", tn.Name(), tn.Type())
		return ""
	}
	tparams, recvArgs := "", ""
	if tps := named.TypeParams(); tps.Len() > 0 {
		tparams = w.typeParams(tps)
		args := make([]string, tps.Len())
		for i := range tps.Len() {
			args[i] = tps.At(i).Obj().Name()
		}
		recvArgs = "[" + strings.Join(args, ", ") + "]"
	}
	fmt.Fprintf(&b, "type %s%s %s\n", tn.Name(), tparams, w.underlying(tn, named.Underlying()))
	var methods []*types.Func
	for m := range named.Methods() {
		if m.Exported() {
			methods = append(methods, m)
		}
	}
	slices.SortFunc(methods, func(a, b *types.Func) int { return strings.Compare(a.Name(), b.Name()) })
	for _, m := range methods {
		recv := tn.Name() + recvArgs
		if _, ptr := m.Signature().Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recv
		}
		fmt.Fprintf(&b, "func (%s) %s%s\n", recv, m.Name(), w.signature(m.Signature()))
	}
	return b.String()
}

// underlying writes a named type's underlying type: a struct with its
// exported fields, an interface with its whole method set.
func (w *writer) underlying(tn *types.TypeName, t types.Type) string {
	switch t := t.(type) {
	case *types.Struct:
		var b strings.Builder
		b.WriteString("struct {\n")
		hidden := false
		for f := range t.Fields() {
			switch {
			case f.Exported():
				if f.Embedded() {
					fmt.Fprintf(&b, "\t%s\n", w.typ(f.Type()))
				} else {
					fmt.Fprintf(&b, "\t%s %s\n", f.Name(), w.typ(f.Type()))
				}
			case f.Embedded():
				// Its exported fields and methods would be promoted; the
				// record has no way to say so.
				w.fail("%s.%s: an unexported embedded field is not supported", tn.Name(), f.Name())
			default:
				hidden = true
			}
		}
		if hidden {
			// A blank field keeps what unexported fields do to a caller:
			// no unkeyed literal, and == only if the struct allows it.
			if types.Comparable(t) {
				b.WriteString("\t_ struct{} // and unexported fields\n")
			} else {
				b.WriteString("\t_ [0]func() // and unexported fields; not comparable\n")
			}
		}
		b.WriteString("}")
		return b.String()
	case *types.Interface:
		var b strings.Builder
		b.WriteString("interface {\n")
		for e := range t.EmbeddedTypes() {
			if _, isIface := e.Underlying().(*types.Interface); !isIface {
				fmt.Fprintf(&b, "\t%s\n", w.typ(e))
			}
		}
		for m := range t.Methods() {
			fmt.Fprintf(&b, "\t%s%s\n", m.Name(), w.signature(m.Signature()))
		}
		b.WriteString("}")
		return b.String()
	case *types.Signature:
		return "func" + w.signature(t)
	}
	return w.typ(t)
}

// Change is one difference between a record and the code, as apidiff
// classifies it.
type Change struct {
	Message    string
	Compatible bool
}

// Diff compares the API recorded in old with the code's, recorded in new,
// both as Record writes them, for the package at path. When the texts
// differ but apidiff sees no change (or cannot read the old record), the
// lines that differ are the changes, as compatible ones.
func (m *Module) Diff(path string, old, new []byte) []Change {
	if bytes.Equal(old, new) {
		return nil
	}
	var changes []Change
	oldPkg, oerr := m.check(path, "old", old)
	newPkg, nerr := m.check(path, "new", new)
	if oerr == nil && nerr == nil {
		for _, c := range apidiff.Changes(oldPkg, newPkg).Changes {
			changes = append(changes, Change{Message: c.Message, Compatible: c.Compatible})
		}
	} else {
		changes = append(changes, Change{Message: fmt.Sprintf("apidiff cannot compare them (%v)", firstErr(oerr, nerr)), Compatible: false})
	}
	if len(changes) == 0 {
		for _, l := range lineDiff(old, new) {
			changes = append(changes, Change{Message: "record text: " + l, Compatible: true})
		}
	}
	return changes
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// check compiles a record into a package.
func (m *Module) check(path, side string, src []byte) (*types.Package, error) {
	f, err := parser.ParseFile(m.fset, side+"/"+path+".go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("the %s record is not Go: %w", side, err)
	}
	// The type checker wants a body for a generic function; a panic is
	// one that needs no return statement.
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body == nil {
			fd.Body = &ast.BlockStmt{List: []ast.Stmt{&ast.ExprStmt{X: &ast.CallExpr{
				Fun: ast.NewIdent("panic"), Args: []ast.Expr{&ast.BasicLit{Kind: token.INT, Value: "0"}}}}}}
		}
	}
	conf := types.Config{Importer: m.imp}
	p, err := conf.Check(path, m.fset, []*ast.File{f}, nil)
	if err != nil {
		return nil, fmt.Errorf("the %s record does not compile: %w", side, err)
	}
	return p, nil
}

// lineDiff lists the lines only one side has, "-" for old, "+" for new.
func lineDiff(old, new []byte) []string {
	count := map[string]int{}
	for l := range strings.Lines(string(old)) {
		count[strings.TrimSpace(l)]--
	}
	for l := range strings.Lines(string(new)) {
		count[strings.TrimSpace(l)]++
	}
	var out []string
	for l, n := range count {
		switch {
		case n < 0:
			out = append(out, "- "+l)
		case n > 0:
			out = append(out, "+ "+l)
		}
	}
	slices.Sort(out)
	return out
}

// RecordPath is where the record of p lives.
func (m *Module) RecordPath(p Package) string {
	return filepath.Join(m.Root, "api", p.Record)
}

// Stale lists the records in api/ of packages that are no longer public.
func (m *Module) Stale() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(m.Root, "api"))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var stale []string
	for _, e := range entries {
		if path.Ext(e.Name()) != ".txt" {
			continue
		}
		if !slices.ContainsFunc(m.Packages, func(p Package) bool { return p.Record == e.Name() }) {
			stale = append(stale, e.Name())
		}
	}
	return stale, nil
}
