package contextsvc

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoOpenTelemetryInRootPackage keeps OpenTelemetry out of what every
// user of the client compiles: it belongs to package contextsvcotel, which
// plugs into the client's Middleware and the handler's DeliveryHook.
// Without the go command the test is skipped, or fails in CI.
func TestNoOpenTelemetryInRootPackage(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go list -deps: %v", err)
		}
		t.Skipf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "go.opentelemetry.io/") {
			t.Errorf("package contextsvc depends on %s: OpenTelemetry belongs in contextsvcotel", p)
		}
	}
}
