package ids

import (
	"regexp"
	"testing"
)

// TestNew: the prefix, then 24 lowercase base32 characters, each id new,
// from New and Fast alike.
func TestNew(t *testing.T) {
	t.Parallel()
	for name, newID := range map[string]func(string) string{"New": New, "Fast": Fast} {
		shape := regexp.MustCompile(`^req_[a-z2-7]{24}$`)
		seen := map[string]bool{}
		for range 1000 {
			id := newID("req_")
			if !shape.MatchString(id) {
				t.Fatalf("%s(%q) = %q", name, "req_", id)
			}
			if seen[id] {
				t.Fatalf("%s: %q twice", name, id)
			}
			seen[id] = true
		}
	}
}

// TestFastAllocations: a request id costs one allocation, its string.
func TestFastAllocations(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = Fast("req_") }); n > 1 {
		t.Errorf("Fast allocates %v times, want 1", n)
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
