package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// Status is the outcome of a check.
type Status string

// The outcomes of a check.
const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Skipped Status = "skipped"
)

// Kinds of [Difference].
const (
	// KindStatus: the answer's status is not the contract's.
	KindStatus = "status"
	// KindDocument: the answer breaks the OpenAPI document (a header, the
	// Content-Type, the body's shape).
	KindDocument = "document"
	// KindValue: the answer is well formed but says something else than
	// the contract (a field's value, what an operation did).
	KindValue = "value"
	// KindHeader: a header the contract puts on every answer is missing
	// or wrong (X-Request-Id, X-RateLimit-*).
	KindHeader = "header"
	// KindDelivery: a webhook delivery differs (its headers, signature,
	// envelope or data).
	KindDelivery = "delivery"
	// KindMissing: something the contract promises never came (a
	// delivery, a retry).
	KindMissing = "missing"
	// KindNoAnswer: the request got no HTTP answer.
	KindNoAnswer = "no-answer"
)

// Report is the outcome of a run.
type Report struct {
	// BaseURL is the server checked.
	BaseURL string `json:"baseURL"`
	// RunID is the run's id, in the names of everything it created.
	RunID string `json:"runId"`
	// ReadOnly tells whether the run was limited to checks that create
	// nothing.
	ReadOnly bool `json:"readOnly"`
	// Started is when the run began.
	Started time.Time `json:"started"`
	// Duration is how long it took.
	Duration time.Duration `json:"-"`
	// Requests is how many requests it sent to the server.
	Requests int `json:"requests"`
	// Interrupted tells that the run was stopped before its end.
	Interrupted bool `json:"interrupted,omitempty"`
	// Unreachable, when set, says why the server could not be reached:
	// no check ran (each is skipped) and the run does not pass.
	Unreachable *Unreachable `json:"unreachable,omitempty"`
	// Checks are the checks in the order they ran.
	Checks []*Check `json:"checks"`
	// Tolerance lists each distinct difference found, with whether the SDK
	// tolerates it.
	Tolerance []Tolerance `json:"tolerance"`
	// LeftBehind lists what the run created and could not delete.
	LeftBehind []LeftBehind `json:"leftBehind"`
	// Coverage counts the requests sent per /v1 operation.
	Coverage []Coverage `json:"coverage"`
}

// Check is one check of the contract and its outcome.
type Check struct {
	// ID names the check, e.g. "contexts.update".
	ID string `json:"id"`
	// Title says what it checks.
	Title string `json:"title"`
	// Status is its outcome.
	Status Status `json:"status"`
	// Note says why it was skipped, or what a passed check saw that is
	// worth knowing.
	Note string `json:"note,omitempty"`
	// Requests is how many requests it sent.
	Requests int `json:"requests"`
	// Differences are what differs from the contract; a failed check has
	// at least one.
	Differences []*Difference `json:"differences,omitempty"`
}

// Difference is one way the server differs from the contract.
type Difference struct {
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Operation is the operation id of the request that showed it, when
	// one did ("GET to a path or method the API does not serve" for a
	// request off the API).
	Operation string `json:"operation,omitempty"`
	// Summary says what differs, the same for every occurrence of the same
	// difference (no ids): the tolerance list groups by it.
	Summary string `json:"summary"`
	// Request is the request that showed it, e.g.
	// `DELETE /v1/contexts/ctx_…`; for a delivery, the delivery.
	Request string `json:"request,omitempty"`
	// Contract says what the contract expects.
	Contract string `json:"contract"`
	// Got says what came back.
	Got string `json:"got"`
	// Document lists how the answer breaks the OpenAPI document, each with
	// the place in the document.
	Document []contract.Mismatch `json:"document,omitempty"`
	// SDK says whether the SDK tolerates the difference.
	SDK *contract.Verdict `json:"sdk,omitempty"`

	judge func() contract.Verdict // decides SDK, after the run
}

// Tolerance is one distinct difference, with whether the SDK tolerates it.
type Tolerance struct {
	// Check is the check that found it (the first, when several did).
	Check string `json:"check"`
	// Kind and Summary are the difference's.
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
	// Operations are the operations whose answers showed it.
	Operations []string `json:"operations,omitempty"`
	// Count is how many times the run met it.
	Count int `json:"count"`
	contract.Verdict
}

// LeftBehind is something the run created and could not delete.
type LeftBehind struct {
	// Kind is "context" or "webhook".
	Kind string `json:"kind"`
	// ID is its id.
	ID string `json:"id"`
	// Why says why it is left and what to do.
	Why string `json:"why"`
}

// Coverage is how one /v1 operation was exercised.
type Coverage struct {
	Operation string `json:"operation"`
	// Requests is how many requests addressed it.
	Requests int `json:"requests"`
	// Statuses are the statuses it answered, ascending.
	Statuses []int `json:"statuses"`
}

// Passed tells whether the server was reached, every check passed or was
// skipped, and the run ran to its end.
func (r *Report) Passed() bool {
	if r.Interrupted || r.Unreachable != nil {
		return false
	}
	for _, c := range r.Checks {
		if c.Status == Failed {
			return false
		}
	}
	return true
}

// Count returns how many checks had the status.
func (r *Report) Count(s Status) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == s {
			n++
		}
	}
	return n
}

// MarshalJSON adds the duration in seconds and the counts. Lists are
// never null: an empty list is [].
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report
	p := plain(*r)
	p.Checks = orEmpty(p.Checks)
	p.Tolerance = orEmpty(p.Tolerance)
	p.LeftBehind = orEmpty(p.LeftBehind)
	p.Coverage = make([]Coverage, len(r.Coverage)) // a copy: marshalling changes nothing
	for i, c := range r.Coverage {
		c.Statuses = orEmpty(c.Statuses)
		p.Coverage[i] = c
	}
	return json.Marshal(struct {
		*plain
		DurationSeconds float64 `json:"durationSeconds"`
		Passed          bool    `json:"passed"`
		Counts          struct {
			Passed  int `json:"passed"`
			Failed  int `json:"failed"`
			Skipped int `json:"skipped"`
		} `json:"counts"`
	}{
		plain:           &p,
		DurationSeconds: r.Duration.Seconds(),
		Passed:          r.Passed(),
		Counts: struct {
			Passed  int `json:"passed"`
			Failed  int `json:"failed"`
			Skipped int `json:"skipped"`
		}{r.Count(Passed), r.Count(Failed), r.Count(Skipped)},
	})
}

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a reader: each check with its outcome
// and, for a failed one, each difference (the request, what the contract
// says, what came back, where it breaks the document, and what the SDK
// makes of it); then the SDK tolerance list, what was left behind, the
// operations covered and the counts.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	mode := ""
	if r.ReadOnly {
		mode = ", read-only"
	}
	fmt.Fprintf(&b, "contextsvc-conform: %s against the contract (run %s%s)\n\n", r.BaseURL, r.RunID, mode)
	if r.Unreachable != nil {
		// Said once; the checks' list would only repeat it.
		fmt.Fprintf(&b, "cannot reach the server: %s\n\nNo check ran (%d skipped); %s in %s: the server cannot be reached.\n",
			r.Unreachable.Message, len(r.Checks), plural(r.Requests, "request"), r.Duration.Round(100*time.Millisecond))
		_, err := io.WriteString(w, b.String())
		return err
	}
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.ID))
	}
	for _, c := range r.Checks {
		label := map[Status]string{Passed: "PASS", Failed: "FAIL", Skipped: "SKIP"}[c.Status]
		fmt.Fprintf(&b, "%-4s  %-*s  %s", label, width, c.ID, c.Title)
		if c.Note != "" {
			fmt.Fprintf(&b, " (%s)", c.Note)
		}
		b.WriteByte('\n')
		// The same difference again shows only its request.
		shown := map[string]bool{}
		for _, d := range c.Differences {
			key := d.Kind + "\x00" + d.Operation + "\x00" + d.Summary
			if shown[key] {
				fmt.Fprintf(&b, "        also:     %s\n", d.Request)
				continue
			}
			shown[key] = true
			writeDifference(&b, d)
		}
	}
	if len(r.Tolerance) > 0 {
		b.WriteString("\nSDK tolerance: does code written against the mock keep working with these differences?\n")
		for _, t := range r.Tolerance {
			verdict := "tolerated    "
			if !t.Tolerated {
				verdict = "NOT tolerated"
			}
			fmt.Fprintf(&b, "  %s  %3dx  %s\n", verdict, t.Count, t.Summary)
			if len(t.Operations) > 0 {
				fmt.Fprintf(&b, "                        in answers to %s\n", strings.Join(t.Operations, ", "))
			}
			fmt.Fprintf(&b, "                        SDK: %s\n", t.SDK)
		}
	}
	if len(r.LeftBehind) > 0 {
		b.WriteString("\nLeft behind (the run created these and could not delete them):\n")
		for _, l := range r.LeftBehind {
			fmt.Fprintf(&b, "  %s %s: %s\n", l.Kind, l.ID, l.Why)
		}
	}
	if len(r.Coverage) > 0 {
		b.WriteString("\nRequests per operation:")
		for i, c := range r.Coverage {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(&b, "%s %s %d %v", sep, c.Operation, c.Requests, c.Statuses)
		}
		b.WriteByte('\n')
	}
	outcome := "everything the run checked follows the contract"
	switch {
	case r.Interrupted:
		outcome = "interrupted before its end"
	case !r.Passed():
		outcome = "the server differs from the contract (and from the mock)"
	}
	fmt.Fprintf(&b, "\n%d passed, %d failed, %d skipped; %d requests in %s: %s.\n",
		r.Count(Passed), r.Count(Failed), r.Count(Skipped), r.Requests, r.Duration.Round(100*time.Millisecond), outcome)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeDifference(b *strings.Builder, d *Difference) {
	const in = "        "
	if d.Operation != "" {
		fmt.Fprintf(b, "      - %s: %s\n", d.Operation, d.Summary)
	} else {
		fmt.Fprintf(b, "      - %s\n", d.Summary)
	}
	if d.Request != "" {
		fmt.Fprintf(b, "%srequest:  %s\n", in, d.Request)
	}
	fmt.Fprintf(b, "%scontract: %s\n", in, d.Contract)
	fmt.Fprintf(b, "%sgot:      %s\n", in, d.Got)
	for _, m := range d.Document {
		fmt.Fprintf(b, "%sdocument: %s\n", in, m)
	}
	if d.SDK != nil {
		verdict := "tolerated"
		if !d.SDK.Tolerated {
			verdict = "NOT tolerated"
		}
		fmt.Fprintf(b, "%sSDK:      %s: %s\n", in, verdict, d.SDK.SDK)
	}
}

// tolerance judges every difference (once) and groups the distinct ones.
func tolerance(checks []*Check) []Tolerance {
	var out []Tolerance
	index := map[string]int{}
	for _, c := range checks {
		for _, d := range c.Differences {
			if d.SDK == nil && d.judge != nil {
				v := d.judge()
				d.SDK = &v
			}
			if d.SDK == nil {
				continue
			}
			key := d.Kind + "\x00" + d.Summary + "\x00" + fmt.Sprint(d.SDK.Tolerated)
			i, ok := index[key]
			if !ok {
				i = len(out)
				index[key] = i
				out = append(out, Tolerance{Check: c.ID, Kind: d.Kind, Summary: d.Summary, Verdict: *d.SDK})
			}
			out[i].Count++
			if d.Operation != "" && !slices.Contains(out[i].Operations, d.Operation) {
				out[i].Operations = append(out[i].Operations, d.Operation)
			}
		}
	}
	// The ones the SDK does not tolerate first: they break mock-tested code.
	slices.SortStableFunc(out, func(a, b Tolerance) int {
		switch {
		case a.Tolerated == b.Tolerated:
			return 0
		case !a.Tolerated:
			return -1
		}
		return 1
	})
	return out
}

// orEmpty is s, or an empty slice for nil (JSON [] rather than null).
func orEmpty[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}
