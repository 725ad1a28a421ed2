package mockrules

import (
	"regexp"
	"strings"
	"testing"
)

func TestAccount(t *testing.T) {
	t.Parallel()
	grammar := regexp.MustCompile(AccountPattern)
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"acme", true}, {"a.b-c_D9", true}, {strings.Repeat("a", MaxAccountLen), true},
		{"", false}, {strings.Repeat("a", MaxAccountLen+1), false}, {"ac me", false}, {"acme/eu", false}, {"caf\u00e9", false},
	} {
		err := Account(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("Account(%q) = %v, want ok %t", tc.name, err, tc.ok)
		}
		if grammar.MatchString(tc.name) != tc.ok {
			t.Errorf("AccountPattern on %q: %t, want %t", tc.name, !tc.ok, tc.ok)
		}
		// The name may sit beside a token in a -key flag: never repeated.
		if err != nil && tc.name != "" && strings.Contains(err.Error(), tc.name) {
			t.Errorf("Account(%q): the error repeats the name: %v", tc.name, err)
		}
	}
}

func TestAdminHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, err string
	}{
		{"mock", ""}, {"my_service", ""}, {"Dev-Box.local", ""}, {".dev.example.com", ""}, {"10.0.0.5", ""},
		{"", "1 to 253"}, {".", "1 to 253"}, {strings.Repeat("a", 254), "1 to 253"},
		{"mock:8080", "without a port"}, {"http://mock", "without a port"}, {"a b", "holds only"}, {"*.example.com", "holds only"},
	} {
		err := AdminHost(tc.name)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("AdminHost(%q) = %v, want %q", tc.name, err, tc.err)
		}
		if err != nil && strings.HasPrefix(err.Error(), "mockserver:") {
			t.Errorf("AdminHost(%q) = %v: the caller says whose error it is", tc.name, err)
		}
	}
}

func TestAdminUser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"admin", true}, {"Ada Lovelace", true}, {"ünïcode", true},
		{"", false}, {"a:b", false}, {"tab\there", false}, {"del\x7f", false}, {"\xff", false},
	} {
		if err := AdminUser(tc.name); (err == nil) != tc.ok {
			t.Errorf("AdminUser(%q) = %v, want ok %t", tc.name, err, tc.ok)
		}
	}
}

func TestMaskToken(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ token, want string }{
		{"sk_test_4f2a9c0e1b7d3a5f6e8c9b0a", "sk_test…9b0a"},
		{"0123456789abcdef", "01234…cdef"},
		{"sk_test_1", "sk_…_1"},
		{"abcd", "a…d"},
		{"ab", "…"},
		{"", "…"},
		{"ключ-доступа-123", "ключ-…-123"},
	} {
		got := MaskToken(tt.token)
		if got != tt.want {
			t.Errorf("MaskToken(%q) = %q, want %q", tt.token, got, tt.want)
		}
		if tt.token != "" && strings.Contains(got, tt.token) {
			t.Errorf("MaskToken(%q) = %q holds the token", tt.token, got)
		}
	}
}

// TestAccountUser: the user of an account is derived from its name alone,
// one per name, and is a user id of the contract.
func TestAccountUser(t *testing.T) {
	t.Parallel()
	u := AccountUser("acme")
	if u != AccountUser("acme") || u == AccountUser("globex") || u == AccountUser("default") {
		t.Errorf("AccountUser not one per account name: %s %s %s", u, AccountUser("globex"), AccountUser("default"))
	}
	if ok, _ := regexp.MatchString(`^user_[a-z0-9]{26}$`, u); !ok {
		t.Errorf("AccountUser(acme) = %q, not a user id of the contract", u)
	}
	// The users of state files written before stay theirs: the derivation
	// never changes.
	if u != "user_ukhitkhh4sgcbfvgmogvkw5ksu" {
		t.Errorf("AccountUser(acme) = %s, want user_ukhitkhh4sgcbfvgmogvkw5ksu as ever", u)
	}
}
