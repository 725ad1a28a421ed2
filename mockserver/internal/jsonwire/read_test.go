package jsonwire

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestPointerPath: a decoder's JSON pointer is named as the API's errors
// name a field.
func TestPointerPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p           jsontext.Pointer
		path, place string
	}{
		{"", "", ""},
		{"/version", "version", "version"},
		{"/accounts/0/contexts/12/versions/1/name", "accounts[0].contexts[12].versions[1].name", "accounts[0].contexts[12].versions[1].name"},
		{"/accounts/0/contexts/3/versions/0/tags/2", "accounts[0].contexts[3].versions[0].tags[2]", "accounts[0].contexts[3].versions[0].tags"},
		{"/a~1b/c~0d", "a/b.c~d", "a/b.c~d"},
	} {
		if got := PointerPath(tc.p); got != tc.path {
			t.Errorf("pointerPath(%q) = %q, want %q", tc.p, got, tc.path)
		}
		if got, _ := ValuePlace(tc.p); got != tc.place {
			t.Errorf("valuePlace(%q) = %q, want %q", tc.p, got, tc.place)
		}
	}
}
