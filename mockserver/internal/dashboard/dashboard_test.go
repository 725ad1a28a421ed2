package dashboard

import (
	"strings"
	"testing"
)

// TestDashboardWritesNoHTML: the page's scripts write every string as
// text: no API that parses HTML from a string is used anywhere, nor
// eval, so no user-controlled string can become markup or code.
func TestDashboardWritesNoHTML(t *testing.T) {
	t.Parallel()
	banned := []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout('", `setTimeout("`, "srcdoc", "javascript:"}
	checked := 0
	for name, a := range assets {
		if !strings.HasSuffix(name, ".js") && !strings.HasSuffix(name, ".html") {
			continue
		}
		checked++
		for _, b := range banned {
			if strings.Contains(string(a.body), b) {
				t.Errorf("%s uses %s", name, b)
			}
		}
		if strings.HasSuffix(name, ".html") && (strings.Contains(string(a.body), "<script>") || strings.Contains(string(a.body), " on")) {
			// No inline script or handler (the CSP would refuse them).
			for _, bad := range []string{"<script>", " onclick", " onload", " onerror", " style="} {
				if strings.Contains(string(a.body), bad) {
					t.Errorf("%s has inline %s", name, bad)
				}
			}
		}
	}
	if checked < 2 {
		t.Fatalf("checked %d files", checked)
	}
}
