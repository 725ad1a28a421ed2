package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    config
		wantErr string
	}{
		{"env secret, defaults", nil, map[string]string{envSecret: "whsec_env"},
			config{addr: "127.0.0.1:9090", path: "/webhooks/contextsvc", secret: "whsec_env", replayWindow: contextsvc.DefaultReplayWindow}, ""},
		{"flags win over env", []string{"-addr", ":0", "-secret", "whsec_flag", "-path", "/hook", "-replay-window", "48h"},
			map[string]string{envSecret: "whsec_env", envPreviousSecret: "whsec_old"},
			config{addr: ":0", path: "/hook", secret: "whsec_flag", previousSecret: "whsec_old", replayWindow: 48 * time.Hour}, ""},
		{"no time check", []string{"-replay-window", "0"}, map[string]string{envSecret: "whsec_env"},
			config{addr: "127.0.0.1:9090", path: "/webhooks/contextsvc", secret: "whsec_env"}, ""},
		{"negative window", []string{"-replay-window", "-1h"}, map[string]string{envSecret: "whsec_env"}, config{}, "-replay-window -1h0m0s is negative"},
		{"no secret", []string{"-addr", ":0"}, nil, config{}, "no signing secret"},
		{"stray argument", []string{"-secret", "s", "extra"}, nil, config{}, "unexpected arguments"},
		{"unknown flag", []string{"-port", "1"}, nil, config{}, "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseConfig(tc.args, env(tc.env), io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "whsec") {
					t.Errorf("the error shows a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(config{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer the handler's goroutines may log into.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServe runs the receiver on a loopback port, sends it deliveries signed
// the way the service signs them, and stops it by cancelling its context.
func TestServe(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := config{path: "/webhooks/contextsvc", secret: "whsec_new", previousSecret: "whsec_old", replayWindow: contextsvc.DefaultReplayWindow}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, cfg, logger) }()
	url := "http://" + ln.Addr().String() + cfg.path

	post := func(body, secret string) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign([]byte(body), secret))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	ts := time.Now().UTC().Format(time.RFC3339Nano)
	updated := fmt.Sprintf(`{"id":"evt_upd1","type":"context.updated","timestamp":%q,"data":{"contextId":"ctx_1",`+
		`"name":"Runbook","version":2,"updatedBy":"user_1","changes":{"sections_modified":["Rollback"],"word_count_delta":42}}}`, ts)
	created := fmt.Sprintf(`{"id":"evt_new1","type":"context.created","timestamp":%q,"data":{"contextId":"ctx_2",`+
		`"name":"Notes","version":1,"tags":[],"createdBy":"user_1"}}`, ts)

	if got := post(updated, "whsec_new"); got != http.StatusOK {
		t.Errorf("delivery signed with the current secret: %d, want 200", got)
	}
	if got := post(created, "whsec_old"); got != http.StatusOK {
		t.Errorf("delivery signed with the previous secret: %d, want 200", got)
	}
	forged := strings.Replace(updated, "evt_upd1", "evt_forged", 1)
	if got := post(forged, "whsec_guess"); got != http.StatusUnauthorized {
		t.Errorf("delivery signed with another secret: %d, want 401", got)
	}
	if got := post(updated, "whsec_new"); got != http.StatusOK {
		t.Errorf("redelivery: %d, want 200", got)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}

	out := logs.String()
	for _, want := range []string{
		`msg="event verified" id=evt_upd1 type=context.updated`,
		`sections_modified=[Rollback] word_count_delta=42`,
		`msg="event verified" id=evt_new1 type=context.created`,
		`msg="shutting down"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "id=evt_upd1 type=context.updated"); n != 1 {
		t.Errorf("evt_upd1 logged %d times as verified, want once (the redelivery is a duplicate):\n%s", n, out)
	}
	if strings.Contains(out, `msg="event verified" id=evt_forged`) {
		t.Errorf("a forged delivery was logged as verified:\n%s", out)
	}
	if strings.Contains(out, "whsec_") {
		t.Errorf("the log shows a secret:\n%s", out)
	}
}

// TestReplayWindowFlag sends deliveries stamped a day ahead (a mock whose
// fake clock was advanced) and a day and a half old: the default window
// refuses both, -replay-window 0 handles both, and -replay-window 48h
// handles the old one but still refuses the one from the future.
func TestReplayWindowFlag(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	envelope := func(id string, at time.Time) string {
		return fmt.Sprintf(`{"id":%q,"type":"context.deleted","timestamp":%q,"data":{"contextId":"ctx_1","name":"Gone","deletedBy":"user_1"}}`,
			id, at.Format(time.RFC3339Nano))
	}
	future, old := envelope("evt_future", now.Add(24*time.Hour)), envelope("evt_old", now.Add(-36*time.Hour))
	for _, tc := range []struct {
		flag                string
		wantFuture, wantOld int
	}{
		{"", http.StatusBadRequest, http.StatusBadRequest},
		{"0", http.StatusOK, http.StatusOK},
		{"48h", http.StatusBadRequest, http.StatusOK},
	} {
		args := []string{"-secret", "whsec_window"}
		if tc.flag != "" {
			args = append(args, "-replay-window", tc.flag)
		}
		cfg, err := parseConfig(args, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		mux, err := newMux(cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []struct {
			body string
			want int
		}{{future, tc.wantFuture}, {old, tc.wantOld}} {
			req := httptest.NewRequest(http.MethodPost, cfg.path, strings.NewReader(d.body))
			req.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign([]byte(d.body), "whsec_window"))
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			if rec.Code != d.want {
				t.Errorf("-replay-window %q: %.30s… answered %d, want %d", tc.flag, d.body, rec.Code, d.want)
			}
		}
	}
}

// TestServerTimeouts: the receiver's server bounds every read and write of
// a connection, and the headers, the body and the answer each fit in the
// next (a body's own bound is the handler's).
func TestServerTimeouts(t *testing.T) {
	t.Parallel()
	srv := newServer(http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Fatalf("time-outs: header %v, read %v, write %v, idle %v; want all set", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	if srv.ReadTimeout < srv.ReadHeaderTimeout+contextsvc.DefaultWebhookBodyTimeout || srv.WriteTimeout < srv.ReadTimeout {
		t.Errorf("read %v is shorter than the headers' %v and the handler's body time-out %v, or write %v shorter than read",
			srv.ReadTimeout, srv.ReadHeaderTimeout, contextsvc.DefaultWebhookBodyTimeout, srv.WriteTimeout)
	}
}
