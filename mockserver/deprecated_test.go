package mockserver

import (
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
)

// TestDeprecatedHelpers: the helpers once made for the command keep
// their behaviour, the rules of mockrules with this package's prefix.
func TestDeprecatedHelpers(t *testing.T) {
	t.Parallel()
	check := func(name string, got, want error) {
		t.Helper()
		switch {
		case want == nil && got != nil:
			t.Errorf("%s = %v, want nil", name, got)
		case want != nil && (got == nil || got.Error() != "mockserver: "+want.Error()):
			t.Errorf("%s = %v, want mockserver: %v", name, got, want)
		}
	}
	for _, name := range []string{"acme", "a b", "", strings.Repeat("a", 65)} {
		check("ValidAccount("+name+")", ValidAccount(name), mockrules.Account(name))
		if AccountUser(name) != mockrules.AccountUser(name) {
			t.Errorf("AccountUser(%q) = %q, want %q", name, AccountUser(name), mockrules.AccountUser(name))
		}
	}
	for _, name := range []string{"mock", "mock:8080", ".example.com", ""} {
		check("ValidAdminHost("+name+")", ValidAdminHost(name), mockrules.AdminHost(name))
	}
	for _, name := range []string{"admin", "a:b", ""} {
		check("ValidAdminUser("+name+")", ValidAdminUser(name), mockrules.AdminUser(name))
	}
	for _, tok := range []string{"sk_test_4f2a9c0e1b7d3a5f6e8c9b0a", "ab"} {
		if MaskToken(tok) != mockrules.MaskToken(tok) {
			t.Errorf("MaskToken(%q) = %q, want %q", tok, MaskToken(tok), mockrules.MaskToken(tok))
		}
	}
}
