package shapetest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type inner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

type outer struct {
	ID string `json:"id"`
	inner
	B       []string `json:"b"` // shadows inner's
	Skipped string   `json:"-"`
	//lint:ignore SA5008 the member named "-", which encoding/json writes
	Dash   string `json:"-,"`
	Plain  bool
	hidden int
	Named  inner `json:"named"`
}

// TestFields: the fields listed are the members encoding/json writes, in
// its order.
func TestFields(t *testing.T) {
	t.Parallel()
	got := Fields[outer]()
	want := []Field{{"id", "string"}, {"a", "string"}, {"b", "[]string"}, {"-", "string"}, {"Plain", "bool"}, {"named", "shapetest.inner"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b, err := json.Marshal(outer{hidden: 1})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range Members(t, b) {
		names = append(names, m.Name)
	}
	if diff := cmp.Diff(Names(want), names); diff != "" {
		t.Errorf("encoding/json writes (-Fields +encoding/json):\n%s", diff)
	}
}

// TestEdits: Without and Insert edit a copy, and refuse a name that is
// not there.
func TestEdits(t *testing.T) {
	t.Parallel()
	fs := []Field{{"a", "int"}, {"b", "int"}}
	got := Insert(Without(fs, "a"), "", Field{"c", "int"})
	got = Insert(got, "b", Field{"d", "int"})
	if diff := cmp.Diff([]Field{{"c", "int"}, {"b", "int"}, {"d", "int"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Field{{"a", "int"}, {"b", "int"}}, fs); diff != "" {
		t.Errorf("the edits changed their input: %s", diff)
	}
	for name, edit := range map[string]func(){
		"Without": func() { Without(fs, "x") },
		"Insert":  func() { Insert(fs, "x", Field{"y", "int"}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of a missing field did not panic", name)
				}
			}()
			edit()
		}()
	}
}

// TestMembers: an object's members come back in order with their values
// as written, and Object writes them back the same.
func TestMembers(t *testing.T) {
	t.Parallel()
	obj := `{"id":"a\u003cb","n":1.50,"l":[1, 2],"o":{"x":null},"q\"":true}`
	ms := Members(t, []byte(obj))
	want := []Member{{"id", `"a\u003cb"`}, {"n", "1.50"}, {"l", "[1, 2]"}, {"o", `{"x":null}`}, {`q"`, "true"}}
	if diff := cmp.Diff(want, ms); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := string(Object(ms)); got != obj {
		t.Errorf("Object = %s, want %s", got, obj)
	}
}
