package redact

import "testing"

func TestSecretParam(t *testing.T) {
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

func TestSecretParams(t *testing.T) {
	t.Parallel()
	tests := []struct{ raw, want string }{
		{"limit=3&api_key=QUERYKEYSECRET99", "limit=3&api_key=xxxxx"},
		{"%61pi_key=abc&tag=a%20b", "%61pi_key=xxxxx&tag=a%20b"},
		{"token=a%2Fb&token=c", "token=xxxxx&token=xxxxx"},
		{"Sig=1&e=2", "Sig=xxxxx&e=2"},
		{"token=&token", "token=&token"}, // nothing to mask
		{"limit=3", "limit=3"},
		{"&&limit=3&", "&&limit=3&"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := SecretParams(tt.raw); got != tt.want {
			t.Errorf("SecretParams(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
