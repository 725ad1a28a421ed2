package faults

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// TestValidate: a fault that could never apply names the field at fault.
func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		f     Fault
		field string // "" when valid
	}{
		{"status", Fault{Status: 503}, ""},
		{"latency only", Fault{Latency: time.Second}, ""},
		{"429 with Retry-After", Fault{Status: 429, RetryAfter: 2 * time.Second}, ""},
		{"after with a 5xx", Fault{Mode: After, Status: 502}, ""},
		{"drop", Fault{Mode: Drop}, ""},
		{"a prefix", Fault{Status: 500, Path: "/v1/contexts/*"}, ""},
		{"nothing to do", Fault{}, "status"},
		{"status out of range", Fault{Status: 302}, "status"},
		{"after with a 4xx", Fault{Mode: After, Status: 429}, "status"},
		{"drop with a status", Fault{Mode: Drop, Status: 500}, "status"},
		{"drop with Retry-After", Fault{Mode: Drop, RetryAfter: time.Second}, "retryAfter"},
		{"unknown mode", Fault{Mode: "later", Status: 500}, "mode"},
		{"Retry-After with a 500", Fault{Status: 500, RetryAfter: time.Second}, "retryAfter"},
		{"half a second", Fault{Status: 503, RetryAfter: 1500 * time.Millisecond}, "retryAfter"},
		{"latency too long", Fault{Latency: MaxLatency + time.Millisecond}, "latencyMs"},
		{"negative times", Fault{Status: 500, Times: -1}, "times"},
		{"method with a space", Fault{Status: 500, Method: "GE T"}, "method"},
		{"relative path", Fault{Status: 500, Path: "v1"}, "path"},
		{"star inside", Fault{Status: 500, Path: "/v1/*/x"}, "path"},
	} {
		field, problem := Validate(tc.f)
		if field != tc.field || (field == "") != (problem == "") {
			t.Errorf("%s: %q %q, want the field %q", tc.name, field, problem, tc.field)
		}
	}
}

// TestSetTake: the oldest matching fault applies and counts down; at zero
// it is gone; every change is told to the hub.
func TestSetTake(t *testing.T) {
	t.Parallel()
	var hub changes.Hub
	sub, _ := hub.Subscribe()
	defer hub.Unsubscribe(sub)
	s := NewSet(&hub, 2)
	if _, ok := s.Take(httptest.NewRequest("GET", "/v1/contexts", nil)); ok {
		t.Fatal("a fault taken from an empty set")
	}
	if f, err := s.Add(Fault{Method: "post", Status: 503}); err != nil || f.Method != "POST" || f.Times != 1 {
		t.Errorf("added %+v, %v: want the method in upper case, times 1", f, err)
	}
	if _, err := s.Add(Fault{Path: "/v1/contexts/*", Status: 500, Times: 2}); err != nil {
		t.Error(err)
	}
	if _, err := s.Add(Fault{Status: 500}); !errors.Is(err, model.ErrTooManyFaults) || !strings.Contains(err.Error(), "2 are active") {
		t.Errorf("past the bound: %v", err)
	}
	if _, err := s.Add(Fault{Status: 302}); !errors.Is(err, model.ErrInvalidFault) || !strings.Contains(err.Error(), "302") {
		t.Errorf("a fault that could never apply: %v", err)
	}
	for i, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/contexts", 0},
		{"GET", "/v1/contexts/ctx_1", 500},
		{"POST", "/v1/contexts/ctx_1", 503},
		{"POST", "/v1/contexts", 0},
		{"PUT", "/v1/contexts/ctx_1", 500},
		{"PUT", "/v1/contexts/ctx_1", 0},
	} {
		f, ok := s.Take(httptest.NewRequest(tc.method, tc.path, nil))
		if ok != (tc.status != 0) || f.Status != tc.status {
			t.Errorf("#%d %s %s: %+v %t, want status %d", i, tc.method, tc.path, f, ok, tc.status)
		}
	}
	if s.Len() != 0 {
		t.Errorf("%d faults left", s.Len())
	}
	got, _ := hub.Take(sub, nil)
	if len(got) != 5 { // two added, three used
		t.Errorf("%d changes told: %+v", len(got), got)
	}
}

// TestErrorFor: an injected status is answered with the contract's type
// for it, and the headers it carries.
func TestErrorFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f            Fault
		typ, retry   string
		authenticate bool
	}{
		{Fault{Status: 429}, "rate_limited", "1", false},
		{Fault{Status: 429, RetryAfter: 7 * time.Second}, "rate_limited", "7", false},
		{Fault{Status: 503, RetryAfter: 3 * time.Second}, "unavailable", "3", false},
		{Fault{Status: 500}, "internal", "", false},
		{Fault{Status: 401}, "unauthorized", "", true},
	} {
		h := http.Header{}
		e := ErrorFor(h, tc.f)
		if e.Status != tc.f.Status || e.Type != tc.typ || h.Get("Retry-After") != tc.retry || (h.Get("WWW-Authenticate") != "") != tc.authenticate {
			t.Errorf("%d: %+v, headers %v", tc.f.Status, e, h)
		}
	}
}
