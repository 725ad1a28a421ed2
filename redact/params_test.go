package redact

import (
	"net/url"
	"strings"
	"testing"
)

func TestSecretParam(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		secret bool
	}{
		{"limit", false},
		{"cursor", false},
		{"tag", false},
		{"q", false},
		{"api_key", true},
		{"apiKey", true},
		{"KEY", true},
		{"access_token", true},
		{"client_secret", true},
		{"sig", true},
		{"Signature", true},
		{"X-Goog-Signature", true},
		{"AWSAccessKeyId", true},
		{"password", true},
		{"Authorization", true},
		{"credentials", true},
		// Percent-encoded names are compared decoded.
		{"%53ignature", true},
		{"s%69g", true},
		{"%74oken", true},
		{"api%5Fkey", true},
		{"li%6Dit", false},
		{"x+token", true},
		// A name that does not decode may hide anything.
		{"%zzsig", true},
		{"%zz", true},
		{"", false},
	}
	for _, tt := range tests {
		if got := SecretParam(tt.name); got != tt.secret {
			t.Errorf("SecretParam(%q) = %v, want %v", tt.name, got, tt.secret)
		}
	}
}

func TestSecretValues(t *testing.T) {
	t.Parallel()
	const m = "REDACTED"
	tests := []struct{ in, want string }{
		{"", ""},
		{"limit=5&cursor=abc", "limit=5&cursor=abc"},
		{"limit=5&api_key=QUERYKEYSECRET99", "limit=5&api_key=REDACTED"},
		{"%53ignature=abc", "%53ignature=REDACTED"},
		{"Signature=abc", "Signature=REDACTED"},
		{"sig=a&sig=b&x=1", "sig=REDACTED&sig=REDACTED&x=1"},
		{"token", "token=REDACTED"},
		{"token=", "token=REDACTED"},
		{"&&token=t&", "&&token=REDACTED&"},
		{"a=1&%zz=2", "a=1&%zz=REDACTED"},
		{"a=%zz&b=2", "a=%zz&b=2"},
		{"sig=REDACTED&limit=1", "sig=REDACTED&limit=1"},
		{"=v&key=k", "=v&key=REDACTED"},
	}
	for _, tt := range tests {
		if got := SecretValues(tt.in, m); got != tt.want {
			t.Errorf("SecretValues(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzSecretValues: whatever the query, no parameter SecretParam names
// keeps a value but the mask, and every other part is kept as written.
func FuzzSecretValues(f *testing.F) {
	for _, s := range []string{"limit=5&sig=abc", "%53ignature=x", "a&&b=%zz&token", "=&=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := SecretValues(raw, "M")
		in, out := strings.Split(raw, "&"), strings.Split(got, "&")
		if len(in) != len(out) {
			t.Fatalf("SecretValues(%q) = %q: %d parts, want %d", raw, got, len(out), len(in))
		}
		for i := range in {
			name, _, _ := strings.Cut(in[i], "=")
			if name != "" && SecretParam(name) {
				if out[i] != name+"=M" {
					t.Fatalf("SecretValues(%q) = %q: part %q, want %q", raw, got, out[i], name+"=M")
				}
			} else if out[i] != in[i] {
				t.Fatalf("SecretValues(%q) = %q: part %q changed to %q", raw, got, in[i], out[i])
			}
		}
		if _, err := url.ParseQuery(raw); err == nil {
			if _, err := url.ParseQuery(got); err != nil {
				t.Fatalf("SecretValues(%q) = %q, which does not parse: %v", raw, got, err)
			}
		}
	})
}

func TestSecretParamNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{"api_key", true},
		{"API_KEY", true},
		{"apikey", true},
		{"access_token", true},
		{"client_secret", true},
		{"sig", true},
		{"X-Amz-Signature", true},
		{"Signature", true},
		{"%53ignature", true}, // "Signature", escaped
		{"pass%77ord", true},  // "password"
		{"auth", true},
		{"Authorization", true},
		{"credential", true},
		{"X-Amz-Credential", true},
		{"%zz", true}, // cannot be decoded: taken for a secret
		{"limit", false},
		{"cursor", false},
		{"tag", false},
		{"order", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := SecretParam(tt.name); got != tt.want {
			t.Errorf("SecretParam(%q) = %t, want %t", tt.name, got, tt.want)
		}
	}
}

func TestSecretValuesMasked(t *testing.T) {
	t.Parallel()
	tests := []struct{ raw, want string }{
		{"limit=3&api_key=QUERYKEYSECRET99", "limit=3&api_key=xxxxx"},
		{"%61pi_key=abc&tag=a%20b", "%61pi_key=xxxxx&tag=a%20b"},
		{"token=a%2Fb&token=c", "token=xxxxx&token=xxxxx"},
		{"Sig=1&e=2", "Sig=xxxxx&e=2"},
		{"token=&token", "token=xxxxx&token=xxxxx"}, // even an empty value
		{"limit=3", "limit=3"},
		{"&&limit=3&", "&&limit=3&"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := SecretValues(tt.raw, Mask); got != tt.want {
			t.Errorf("SecretValues(%q, Mask) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
