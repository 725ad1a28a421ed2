package delivery

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
)

// TestAttemptError: the text of a transport's error with the receiver's
// url in it, at the top or wrapped, shows the url redacted; other errors
// are as they are.
func TestAttemptError(t *testing.T) {
	t.Parallel()
	const raw = "https://u:p4ss@h.example/in?token=t0ken"
	refused := errors.New("dial tcp 10.0.0.1:443: connect: connection refused")
	// net/http's client puts the url in with its password starred.
	ue := &url.Error{Op: "Post", URL: "https://u:***@h.example/in?token=t0ken", Err: refused}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"a transport error", ue, `Post "https://xxxxx@h.example/in?token=xxxxx": dial tcp 10.0.0.1:443: connect: connection refused`},
		{"wrapped", fmt.Errorf("attempt: %w", ue), `attempt: Post "https://xxxxx@h.example/in?token=xxxxx": dial tcp 10.0.0.1:443: connect: connection refused`},
		{"no url", refused, refused.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := attemptError(tt.err, raw); got != tt.want {
				t.Errorf("attemptError = %q, want %q", got, tt.want)
			}
		})
	}
}
