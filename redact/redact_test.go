package redact

import (
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, want string
	}{
		{"plain", "https://hooks.example.com/in", "https://hooks.example.com/in"},
		{"port and path", "http://127.0.0.1:9/down", "http://127.0.0.1:9/down"},
		{"password", "https://bot:s3cret@hooks.example.com/in", "https://xxxxx@hooks.example.com/in"},
		{"user only", "https://tok_abc123@hooks.example.com/in", "https://xxxxx@hooks.example.com/in"},
		{"empty userinfo", "https://@hooks.example.com/in", "https://xxxxx@hooks.example.com/in"},
		{"query token", "https://hooks.example.com/in?token=abc123", "https://hooks.example.com/in?token=xxxxx"},
		{"query values in order", "https://h.example/in?z=1&a=2&z=3", "https://h.example/in?z=xxxxx&a=xxxxx&z=xxxxx"},
		{"escaped value", "https://h.example/in?sig=a%2Bb%3D%3D", "https://h.example/in?sig=xxxxx"},
		{"bare parameter", "https://h.example/in?abc123secret", "https://h.example/in?xxxxx"},
		{"empty value kept", "https://h.example/in?debug=&v=2", "https://h.example/in?debug=&v=xxxxx"},
		{"empty parts", "https://h.example/in?&a=1&&", "https://h.example/in?&a=xxxxx&&"},
		{"lone question mark", "https://h.example/in?", "https://h.example/in?"},
		{"fragment stays", "https://h.example/in?k=v#part", "https://h.example/in?k=xxxxx#part"},
		{"both", "http://u:p@localhost:8081/hook?token=t&x", "http://xxxxx@localhost:8081/hook?token=xxxxx&xxxxx"},
		{"escaped secret name", "https://h.example/in?%53ignature=abc", "https://h.example/in?%53ignature=xxxxx"},
		{"unparsable", "http://h.example/%zz?token=abc", "(unparsable url)"},
		{"control character", "http://h.example/\x7f?token=abc", "(unparsable url)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := URL(tt.raw); got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.raw, got, tt.want)
			}
			if u, err := url.Parse(tt.raw); err == nil {
				before := u.String()
				if got := Parsed(u); got != tt.want || u.String() != before {
					t.Errorf("Parsed(%q) = %q, want %q; the URL became %q", tt.raw, got, tt.want, u)
				}
			}
		})
	}
}

// FuzzURL: whatever the URL, what URL returns holds no userinfo but the
// mask and no query value but the mask, and parses again.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"https://a:b@h.example/p?x=1&y", "http://localhost:1/?token=abc#f", "https://h/?%41=%42", "//u@h?q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := URL(raw)
		if _, err := url.Parse(raw); err != nil {
			if got != "(unparsable url)" {
				t.Fatalf("URL(%q) = %q for an unparsable url", raw, got)
			}
			return
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("URL(%q) = %q, which does not parse: %v", raw, got, err)
		}
		if u.User != nil && u.User.String() != Mask {
			t.Fatalf("URL(%q) = %q keeps userinfo %q", raw, got, u.User)
		}
		for part := range strings.SplitSeq(u.RawQuery, "&") {
			if _, value, ok := strings.Cut(part, "="); (ok && value != "" && value != Mask) || (!ok && part != "" && part != Mask) {
				t.Fatalf("URL(%q) = %q keeps query part %q", raw, got, part)
			}
		}
	})
}
