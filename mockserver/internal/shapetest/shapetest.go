// Package shapetest is what the mock server's tests use to hold a JSON
// shape to its one definition (model's wire types, the SDK's, a public
// type's tags): the members encoding/json writes of a struct type, in
// order, with their Go types ([Fields]), edited to say how one shape shows
// more or less of another ([Without], [Insert]); and the members of an
// encoded object, their values as written ([Members]), to compare what a
// hand-written encoder wrote with encoding/json's bytes member by member.
package shapetest

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// Field is a member that encoding/json writes of a struct type.
type Field struct {
	// Name is the member's name.
	Name string
	// Type is the Go type of its value ("string", "[]string",
	// "contextsvc.Changes").
	Type string
}

// Fields lists the members encoding/json writes of the struct type T, in
// the order it writes them: an embedded struct's in its place, a field
// tagged "-" or unexported left out. A name given at two depths is the
// shallower field's, as encoding/json has it.
func Fields[T any]() []Field { return FieldsOf(reflect.TypeFor[T]()) }

// FieldsOf is Fields of the struct type t.
func FieldsOf(t reflect.Type) []Field {
	type found struct {
		Field
		depth int
	}
	var all []found
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && f.Tag.Get("json") == "-" {
				continue
			}
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, depth+1)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			all = append(all, found{Field{name, f.Type.String()}, depth})
		}
	}
	walk(t, 0)
	var out []Field
	for _, f := range all {
		shallowest := true
		for _, g := range all {
			if g.Name == f.Name && g.depth < f.depth {
				shallowest = false
			}
		}
		if shallowest {
			out = append(out, f.Field)
		}
	}
	return out
}

// Names returns the fields' names, in order.
func Names(fs []Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// Without returns fs without the fields named; it panics when one of them
// is not there, so an edit never outlives the field it removes.
func Without(fs []Field, names ...string) []Field {
	out := slices.Clone(fs)
	for _, n := range names {
		i := slices.IndexFunc(out, func(f Field) bool { return f.Name == n })
		if i < 0 {
			panic("shapetest: no field " + n + " to leave out")
		}
		out = slices.Delete(out, i, i+1)
	}
	return out
}

// Insert returns fs with add inserted after the field named after (at the
// start when after is ""); it panics when there is no such field.
func Insert(fs []Field, after string, add ...Field) []Field {
	at := 0
	if after != "" {
		i := slices.IndexFunc(fs, func(f Field) bool { return f.Name == after })
		if i < 0 {
			panic("shapetest: no field " + after + " to insert after")
		}
		at = i + 1
	}
	return slices.Insert(slices.Clone(fs), at, add...)
}

// Member is a member of an encoded object: its name and its value's
// bytes as written.
type Member struct {
	Name  string
	Value string
}

// Members returns the members of the JSON object obj in order, each value
// as written (its escapes kept), failing the test when obj is not one
// object.
func Members(tb testing.TB, obj []byte) []Member {
	tb.Helper()
	dec := jsontext.NewDecoder(bytes.NewReader(obj), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		tb.Fatalf("not a JSON object (%v): %s", err, obj)
	}
	var out []Member
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			tb.Fatalf("%v: %s", err, obj)
		}
		name := tok.String() // before the next read voids the token
		v, err := dec.ReadValue()
		if err != nil {
			tb.Fatalf("%v: %s", err, obj)
		}
		out = append(out, Member{name, string(v)})
	}
	if _, err := dec.ReadToken(); err != nil {
		tb.Fatalf("%v: %s", err, obj)
	}
	return out
}

// Object writes members as a JSON object, each value as it is: with
// Members, what is left of an encoded object once some members are taken
// out, to compare byte for byte.
func Object(members []Member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := jsontext.AppendQuote(nil, m.Name)
		b.Write(name)
		b.WriteByte(':')
		b.WriteString(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}
