package main

import (
	"strings"
	"testing"
)

// TestRun runs the example and checks the picture it prints: six traces,
// the first with the client's retry of the mock's 503, the event it
// fired, and the failed delivery attempt retried on the fake clock, each
// attempt with the receiver's handling under it.
func TestRun(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	// The retry a minute later on the mock's clock shows milliseconds later:
	// the output says why before a reader wonders.
	if head, _, _ := strings.Cut(text, "\ntrace "); !strings.Contains(head, "The mock runs on a fake clock") {
		t.Errorf("the output does not say the mock's clock is fake before the traces:\n%s", head)
	}
	traces := strings.Split(text, "\ntrace ")[1:]
	if len(traces) != 6 {
		t.Fatalf("%d traces, want 6:\n%s", len(traces), text)
	}
	// Each wanted line, in order, with its depth in the tree.
	first := []string{
		"| 1. create",
		"|   contextsvc.contexts.create  · call createContext, 2 attempt(s), contextsvc.retry.backoff",
		"|     POST /v1/contexts  · attempt 1, 503",
		"|       POST /v1/contexts  · the mock's handling, 503",
		"|     POST /v1/contexts  · attempt 2, 201",
		"|       POST /v1/contexts  · the mock's handling, 201",
		"|         create context.created  · event evt_",
		"|           POST  · delivery attempt 1 (mock → receiver), 500",
		"|             process context.created  · the receiver's handling: handler_error, 500",
		"|           POST  · delivery attempt 2 (mock → receiver), 200",
		"|             process context.created  · the receiver's handling: handled, 200",
		"|         create context.version.created  · event evt_",
	}
	rest := traces[0]
	for _, want := range first {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("the first trace lacks %q after what came before:\n%s", want, traces[0])
		}
		rest = rest[i+len(want):]
	}
	for i, want := range []string{"| 2. update", "| 3. list", "| 4. versions", "| 5. export Markdown", "| 6. delete"} {
		tr := traces[i+1]
		if !strings.Contains(tr, want) || !strings.Contains(tr, "the mock's handling, 200") {
			t.Errorf("trace %d lacks %q or the mock's handling:\n%s", i+2, want, tr)
		}
	}
	if n := strings.Count(text, "the receiver's handling: handled"); n != 6 {
		t.Errorf("%d deliveries handled, want 6 (created, two versions, updated, export, deleted):\n%s", n, text)
	}
}
