package e2e_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// TestTypedErrors checks that each error status of the mock server reaches
// the caller as a *contextsvc.Error matching its sentinel, with the fields a
// caller logs or branches on, and that no error text carries the key.
func TestTypedErrors(t *testing.T) {
	t.Parallel()
	const writeToken, readToken = "sk_test_write_e2e", "sk_test_read_e2e"
	ts := mockserver.NewTestServer(t,
		mockserver.WithKey(mockserver.Key{Token: writeToken, Account: "acct_e2e"}),
		mockserver.WithKey(mockserver.Key{Token: readToken, Account: "acct_e2e", Scope: mockserver.ScopeRead}),
	)
	writer := newClient(t, ts, writeToken)
	reader := newClient(t, ts, readToken)
	stranger := newClient(t, ts, "sk_test_unknown_e2e")
	ctx := context.Background()

	existing, err := writer.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Shared"})
	if err != nil {
		t.Fatal(err)
	}
	// The read key sees the write key's contexts (same account).
	if _, err := reader.Contexts.Get(ctx, existing.ID); err != nil {
		t.Fatalf("read key Get: %v", err)
	}

	tests := []struct {
		name     string
		call     func() error
		sentinel error
		status   int
		errType  string
		param    string
		token    string // must not appear in the error text
	}{
		{"400 blank name", func() error {
			_, err := writer.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "   "})
			return err
		}, contextsvc.ErrBadRequest, 400, "invalid_request", "name", writeToken},
		{"400 too many tags", func() error {
			tags := make([]string, 21)
			for i := range tags {
				tags[i] = strings.Repeat("t", i+1)
			}
			_, err := writer.Contexts.Update(ctx, existing.ID, &contextsvc.UpdateContextRequest{Tags: tags})
			return err
		}, contextsvc.ErrBadRequest, 400, "invalid_request", "tags", writeToken},
		{"400 limit out of range", func() error {
			_, err := writer.Contexts.List(ctx, &contextsvc.ContextListOptions{Limit: 101})
			return err
		}, contextsvc.ErrBadRequest, 400, "invalid_request", "limit", writeToken},
		{"401 unknown key", func() error {
			_, err := stranger.Contexts.Get(ctx, existing.ID)
			return err
		}, contextsvc.ErrUnauthorized, 401, "unauthorized", "", "sk_test_unknown_e2e"},
		{"403 read key writes", func() error {
			_, err := reader.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Not allowed"})
			return err
		}, contextsvc.ErrForbidden, 403, "forbidden", "", readToken},
		{"403 read key deletes", func() error {
			_, err := reader.Contexts.Delete(ctx, existing.ID)
			return err
		}, contextsvc.ErrForbidden, 403, "forbidden", "", readToken},
		{"404 missing context", func() error {
			_, err := writer.Contexts.Get(ctx, "ctx_doesnotexist0000000000")
			return err
		}, contextsvc.ErrNotFound, 404, "not_found", "", writeToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call()
			if !errors.Is(err, tc.sentinel) {
				t.Fatalf("err = %v, want one matching %v", err, tc.sentinel)
			}
			var apiErr *contextsvc.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err %T is no *contextsvc.Error", err)
			}
			if apiErr.StatusCode != tc.status || apiErr.Type != tc.errType || apiErr.Param != tc.param {
				t.Errorf("status %d type %q param %q, want %d %q %q", apiErr.StatusCode, apiErr.Type, apiErr.Param, tc.status, tc.errType, tc.param)
			}
			if !strings.HasPrefix(apiErr.RequestID, "req_") {
				t.Errorf("RequestID = %q, want req_…", apiErr.RequestID)
			}
			if apiErr.Attempts != 1 {
				t.Errorf("Attempts = %d: a %d is not retried", apiErr.Attempts, tc.status)
			}
			if apiErr.Message == "" {
				t.Error("no message")
			}
			if strings.Contains(err.Error(), tc.token) {
				t.Errorf("the error text shows the API key: %s", err)
			}
		})
	}
	t.Cleanup(func() {
		// Nothing refused was stored: only the one context, unchanged.
		snap := ts.Snapshot()
		if len(snap.Contexts) != 1 || snap.Contexts[0].ID != existing.ID || snap.Contexts[0].Version != 1 {
			t.Errorf("store after refused calls: %+v", snap.Contexts)
		}
	})
}
