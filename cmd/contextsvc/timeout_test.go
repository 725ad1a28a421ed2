package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestTimeoutFlag: --timeout is what bounds a request, beyond the SDK's
// own default bounds on a call (2 min) and on an answer's headers (30 s)
// when it is longer, and within them when shorter. The server answers
// after 150 s, on synctest's clock.
func TestTimeoutFlag(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		timeout string
		code    int
	}{
		{"3m", exitOK},
		{"1m", exitError},
	} {
		t.Run(tt.timeout, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				api := handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-time.After(150 * time.Second):
					case <-r.Context().Done():
						return
					}
					listAnswer(w)
				})}
				env := map[string]string{"CONTEXTSVC_BASE_URL": "http://api.test/v1", "CONTEXTSVC_API_KEY": testKey}
				var out, errOut bytes.Buffer
				s := &streams{in: strings.NewReader(""), out: &out, err: &errOut, getenv: envMap(env).get, transport: api}
				if code := run(t.Context(), []string{"contexts", "list", "--timeout", tt.timeout}, s); code != tt.code {
					t.Errorf("--timeout %s against a server that answers after 150 s: exit %d, want %d\n%s", tt.timeout, code, tt.code, errOut.String())
				}
			})
		})
	}
}
