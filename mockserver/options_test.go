package mockserver

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestOpenRefusesBadOptions: every option given a value it cannot use, and
// every key Open cannot accept, is an error wrapping ErrInvalidOption that
// names the option (and a key by its position, never by its token), and
// neither Open nor the option panics.
func TestOpenRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opt  Option
		want string
	}{
		{"nil clock", WithClock(nil), "WithClock(nil)"},
		{"nil schedule", WithRetrySchedule(nil), "WithRetrySchedule(nil)"},
		{"negative delay", WithRetrySchedule([]time.Duration{time.Second, -time.Second}), "delay #2"},
		{"zero delivery timeout", WithDeliveryTimeout(0), "WithDeliveryTimeout(0s)"},
		{"zero workers", WithDeliveryWorkers(0), "WithDeliveryWorkers(0)"},
		{"negative backlog", WithDeliveryBacklog(-1), "WithDeliveryBacklog(-1)"},
		{"zero retry limit", WithRetryLimit(0), "WithRetryLimit(0)"},
		{"zero history", WithHistoryLimit(0), "WithHistoryLimit(0)"},
		{"zero header timeout", WithReadHeaderTimeout(0), "WithReadHeaderTimeout"},
		{"negative body timeout", WithReadBodyTimeout(-time.Second), "WithReadBodyTimeout"},
		{"zero idle timeout", WithIdleTimeout(0), "WithIdleTimeout"},
		{"empty state file", WithStateFile(""), "WithStateFile"},
		{"zero state interval", WithStateInterval(0), "WithStateInterval"},
		{"admin host with a port", WithAdminHosts("mock:8080"), "WithAdminHosts"},
		{"empty admin host", WithAdminHosts(""), "WithAdminHosts"},
		{"bad account", WithKey(Key{Token: "sk_secret_1", Account: "a/b"}), "WithKey #1"},
		{"unknown plan", WithKey(Key{Token: "sk_secret_1", Plan: "gold"}), "WithKey #1: unknown plan"},
		{"token with a space", WithKey(Key{Token: "sk secret"}), "WithKey #1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := Open(tc.opt)
			if !errors.Is(err, ErrInvalidOption) || s != nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, %v; want nil and an ErrInvalidOption saying %q", s, err, tc.want)
			}
			if strings.Contains(err.Error(), "sk_secret") || strings.Contains(err.Error(), "sk secret") {
				t.Errorf("the error shows a token: %v", err)
			}
		})
	}

	// Two keys with one token: the second is named by position.
	s, err := Open(WithKey(Key{Token: "sk_secret_1"}), WithKey(Key{Token: "sk_secret_2"}), WithKey(Key{Token: "sk_secret_1"}))
	if !errors.Is(err, ErrInvalidOption) || s != nil || !strings.Contains(err.Error(), "WithKey #3: the same token as key #1") ||
		strings.Contains(err.Error(), "sk_secret") {
		t.Errorf("duplicate token: %v, %v", s, err)
	}

	// New panics with Open's error, for tests whose options are constants.
	defer func() {
		if v, ok := recover().(error); !ok || !errors.Is(v, ErrInvalidOption) {
			t.Errorf("New panicked with %v, want Open's error", v)
		}
	}()
	New(WithHistoryLimit(-1))
}

// TestOpenAcceptsGoodOptions: the values the options document are taken,
// including a single attempt and a nil logger.
func TestOpenAcceptsGoodOptions(t *testing.T) {
	t.Parallel()
	s, err := Open(WithRetrySchedule([]time.Duration{}), WithLogger(nil), WithAdminHosts("mock", ".dev.example.com"),
		WithKey(Key{Token: "a"}), WithKey(Key{Token: "b", Account: "acme"}), WithHistoryLimit(1), WithDeliveryWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Keys()) != 2 {
		t.Errorf("keys %v", s.Keys())
	}
	if err := s.Close(t.Context()); err != nil {
		t.Error(err)
	}
}
