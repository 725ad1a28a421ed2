package ids

import (
	"regexp"
	"testing"
)

// TestNew: the prefix, then 24 lowercase base32 characters, each id new.
func TestNew(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^ctx_[a-z2-7]{24}$`)
	seen := map[string]bool{}
	for range 100 {
		id := New("ctx_")
		if !shape.MatchString(id) {
			t.Fatalf("New(%q) = %q", "ctx_", id)
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{nil, ""},
		{[]byte{0xff}, "74"},
		{[]byte("hello"), "nbswy3dp"},
	} {
		if got := Encode(tc.in); got != tc.want {
			t.Errorf("Encode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
