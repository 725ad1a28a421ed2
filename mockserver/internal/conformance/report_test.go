package conformance

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

func TestRedactor(t *testing.T) {
	t.Parallel()
	const receiver = "https://user:hunter22@hooks.example/in?token=tok_secret_1&x=ab"
	r := newRedactor([]string{"sk_live_key", "", "whsec_s"}, receiver)
	for _, tt := range []struct{ in, want string }{
		{"Authorization: Bearer sk_live_key", "Authorization: Bearer [REDACTED]"},
		{`{"secret":"whsec_s"}`, `{"secret":"[REDACTED]"}`},
		{"posted to " + receiver + "&contextsvc-conform-run=abc", "posted to https://hooks.example/in?token=%E2%80%A6&x=%E2%80%A6&contextsvc-conform-run=abc"},
		// In a JSON body "&" is escaped, so the URL does not match whole:
		// its secret parts are replaced on their own.
		{`{"url":"https://user:hunter22@hooks.example/in?token=tok_secret_1\u0026x=ab"}`, `{"url":"https://user:[REDACTED]@hooks.example/in?token=[REDACTED]\u0026x=ab"}`},
		{"nothing to hide", "nothing to hide"},
	} {
		if got := r.text(tt.in); got != tt.want {
			t.Errorf("text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := shownURL("https://h.example/p?a=1&contextsvc-conform-run=r1"); got != "https://h.example/p?a=%E2%80%A6&contextsvc-conform-run=r1" {
		t.Errorf("shownURL = %q", got)
	}
}

// TestReportText shows a failed check's first difference whole, the same
// difference again by its request only, and the tolerance list with the
// ones the SDK does not tolerate first.
func TestReportText(t *testing.T) {
	t.Parallel()
	d := func(path string, tolerated bool) *Difference {
		return &Difference{Kind: KindStatus, Operation: "deleteContext", Summary: "204 where the contract answers 200",
			Request: "DELETE " + path, Contract: "200 with the deletion result", Got: "204 (no body)",
			judge: func() contract.Verdict {
				return contract.Verdict{Tolerated: tolerated, SDK: "Contexts.Delete returns ID"}
			}}
	}
	rep := &Report{BaseURL: "https://api.example/v1", RunID: "r1", Started: time.Now(), Duration: 3 * time.Second, Requests: 4,
		Checks: []*Check{
			{ID: "contexts.delete", Title: "delete", Status: Failed, Differences: []*Difference{d("/v1/contexts/ctx_1", true), d("/v1/contexts/ctx_2", true)}},
			{ID: "paging", Title: "paging", Status: Failed, Differences: []*Difference{{Kind: KindValue, Summary: "no cursor", Contract: "a cursor", Got: "none",
				judge: behaviour("All stops")}}},
			{ID: "auth", Title: "auth", Status: Passed, Note: "3 cases"},
			{ID: "ratelimit.exceeded", Title: "429", Status: Skipped, Note: "opt-in"},
		},
		LeftBehind: []LeftBehind{{Kind: "webhook", ID: "wh_1", Why: "no delete"}},
	}
	rep.Tolerance = tolerance(rep.Checks)
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"FAIL  contexts.delete     delete\n      - deleteContext: 204 where the contract answers 200\n        request:  DELETE /v1/contexts/ctx_1\n",
		"        also:     DELETE /v1/contexts/ctx_2\n",
		"PASS  auth                auth (3 cases)\n",
		"SKIP  ratelimit.exceeded  429 (opt-in)\n",
		"  NOT tolerated    1x  no cursor\n",
		"  tolerated        2x  204 where the contract answers 200\n                        in answers to deleteContext\n",
		"  webhook wh_1: no delete\n",
		"1 passed, 2 failed, 1 skipped; 4 requests in 3s: the server differs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "NOT tolerated") > strings.Index(out, "  tolerated ") {
		t.Errorf("the tolerated difference comes first:\n%s", out)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Passed          bool
		DurationSeconds float64
		Counts          struct{ Passed, Failed, Skipped int }
		Tolerance       []struct {
			Tolerated bool
			Count     int
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Passed || doc.DurationSeconds != 3 || doc.Counts.Failed != 2 || len(doc.Tolerance) != 2 || doc.Tolerance[1].Count != 2 {
		t.Errorf("JSON report %+v", doc)
	}
}

func TestPassed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		rep  Report
		want bool
	}{
		{Report{}, true},
		{Report{Checks: []*Check{{Status: Passed}, {Status: Skipped}}}, true},
		{Report{Checks: []*Check{{Status: Passed}, {Status: Failed}}}, false},
		{Report{Checks: []*Check{{Status: Passed}}, Interrupted: true}, false},
	} {
		if got := tt.rep.Passed(); got != tt.want {
			t.Errorf("%+v: Passed %t, want %t", tt.rep, got, tt.want)
		}
	}
}
