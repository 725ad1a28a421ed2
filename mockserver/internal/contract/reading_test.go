package contract_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// TestJudge replays answers, conforming and not, through the SDK and
// checks the verdict: tolerated or not, and what the SDK's reading says.
func TestJudge(t *testing.T) {
	t.Parallel()
	page := func(body string) contract.Exchange {
		return contract.Exchange{Method: "GET", Path: "/v1/contexts", RawQuery: "limit=2", Status: 200, Header: jsonHeader(), Body: []byte(body)}
	}
	tests := []struct {
		name      string
		op        string
		ex        contract.Exchange
		want      contract.Expect
		tolerated bool
		says      []string // substrings of the verdict's text
	}{
		{"the contract's page", contract.OpListContexts, page(`{"data":[` + contextJSON + `],"hasMore":false,"nextCursor":null}`), contract.Expect{},
			true, []string{"Contexts.List returns 1 contexts, HasMore false"}},
		{"a bare array", contract.OpListContexts, page(`[` + contextJSON + `,` + contextJSON + `]`), contract.Expect{},
			true, []string{"returns 2 contexts"}},
		{"a bare array where more pages follow", contract.OpListContexts, page(`[` + contextJSON + `,` + contextJSON + `]`), contract.Expect{MorePages: true},
			false, []string{"All stops here"}},
		{"items under another key", contract.OpListContexts, page(`{"items":[` + contextJSON + `]}`), contract.Expect{},
			false, []string{"Contexts.List fails", "malformed response", "without its data"}},
		{"a wrapped context", contract.OpGetContext, contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: jsonHeader(), Body: []byte(`{"context":` + contextJSON + `}`)},
			contract.Expect{}, false, []string{"Contexts.Get fails", "malformed response", "without an id"}},
		{"a context without its times", contract.OpGetContext, contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: jsonHeader(),
			Body: []byte(`{"id":"` + ctxID + `","name":"n","content":"","tags":null,"version":1}`)},
			contract.Expect{}, true, []string{"reads createdAt, tags, updatedAt as zero"}},
		{"a 200 create", contract.OpCreateContext, contract.Exchange{Method: "POST", Path: "/v1/contexts", Status: 200, Header: jsonHeader(), Body: []byte(contextJSON)},
			contract.Expect{Status: 201}, true, []string{`Contexts.Create returns context "` + ctxID + `"`}},
		{"an update answered 204", contract.OpUpdateContext, contract.Exchange{Method: "PUT", Path: "/v1/contexts/" + ctxID, Status: 204, Header: header("X-Request-Id", reqID)},
			contract.Expect{Status: 200}, false, []string{"empty response body", "gets this error"}},
		{"a delete answered 204", contract.OpDeleteContext, contract.Exchange{Method: "DELETE", Path: "/v1/contexts/" + ctxID, Status: 204, Header: header("X-Request-Id", reqID)},
			contract.Expect{Status: 200}, true, []string{"Deleted true"}},
		{"an export", contract.OpExportContext, contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID + "/export", RawQuery: "format=pdf", Status: 200,
			Header: header("Content-Type", "application/pdf", "Content-Disposition", `attachment; filename="n-v1.pdf"`), Body: []byte("%PDF-1.7")},
			contract.Expect{}, true, []string{`8 bytes, ContentType "application/pdf", Filename "n-v1.pdf"`}},
		{"a registration", contract.OpRegisterWebhook, contract.Exchange{Method: "POST", Path: "/v1/webhooks", Status: 201, Header: jsonHeader(),
			Body: []byte(`{"id":"wh_abcdefghijklmnopqrstu","url":"https://x.example/h","events":["context.created"],"createdAt":"2026-01-02T03:04:05.000Z","active":true}`)},
			contract.Expect{}, true, []string{`Webhooks.Register returns webhook "wh_abcdefghijklmnopqrstu"`}},
		{"an id the SDK would not send", contract.OpGetContext, contract.Exchange{Method: "GET", Path: "/v1/contexts/..%3B%0A", Status: 404, Header: jsonHeader(), Body: []byte(errorJSON("not_found", ""))},
			contract.Expect{Type: "not_found"}, true, []string{"StatusCode 404"}},
		{"an error of another shape", contract.OpGetContext, contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 404, Header: jsonHeader(), Body: []byte(`{"code":"not_found","message":"gone"}`)},
			contract.Expect{Type: "not_found"}, true, []string{"StatusCode 404", `Error.Type is "", not "not_found"`}},
		{"a param lost", contract.OpListContexts, contract.Exchange{Method: "GET", Path: "/v1/contexts", Status: 400, Header: jsonHeader(), Body: []byte(`{"error":"bad limit"}`)},
			contract.Expect{Type: "invalid_request", Param: "limit"}, true, []string{`Error.Param is "", not "limit"`}},
		{"a 422 for a 400", contract.OpCreateContext, contract.Exchange{Method: "POST", Path: "/v1/contexts", Status: 422, Header: jsonHeader(), Body: []byte(errorJSON("invalid_request", "name"))},
			contract.Expect{Status: 400, Type: "invalid_request", Param: "name"}, true, []string{"StatusCode 422"}},
		{"a 404 for a 400", contract.OpListContexts, contract.Exchange{Method: "GET", Path: "/v1/contexts", Status: 404, Header: jsonHeader(), Body: []byte(errorJSON("not_found", ""))},
			contract.Expect{Status: 400}, false, []string{"errors.Is(err, contextsvc.ErrBadRequest) no longer holds"}},
		{"a 200 for a 404", contract.OpGetContext, contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: jsonHeader(), Body: []byte(contextJSON)},
			contract.Expect{Status: 404}, false, []string{"gets a result instead"}},
		{"a Retry-After date", contract.OpGetContext, contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 429,
			Header: jsonHeader("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)), Body: []byte(errorJSON("rate_limited", ""))},
			contract.Expect{}, true, []string{"RetryAfter"}},
		{"an unknown path", "", contract.Exchange{Method: "GET", Path: "/v1/nope", Status: 404, Header: header("Content-Type", "text/plain"), Body: []byte("404 page not found")},
			contract.Expect{}, true, []string{"Client.Do returns a *contextsvc.Error: StatusCode 404"}},
		{"headers missing", contract.OpGetContext, contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: header("Content-Type", "application/json"), Body: []byte(contextJSON)},
			contract.Expect{Headers: true}, true, []string{"Response.RequestID is empty", "Response.RateLimit is zero"}},
		{"an operation the SDK lacks", "deleteEverything", contract.Exchange{Method: "DELETE", Path: "/v1/contexts", Status: 200, Header: jsonHeader(), Body: []byte(`{}`)},
			contract.Expect{}, false, []string{"no method for operation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := contract.Judge(&tt.ex, contract.ReadAnswer(tt.op, &tt.ex), tt.want)
			if v.Tolerated != tt.tolerated {
				t.Errorf("tolerated %t, want %t: %s", v.Tolerated, tt.tolerated, v.SDK)
			}
			for _, s := range tt.says {
				if !strings.Contains(v.SDK, s) {
					t.Errorf("the verdict %q does not say %q", v.SDK, s)
				}
			}
		})
	}
}

func TestJudgeDelivery(t *testing.T) {
	t.Parallel()
	const secret = "whsec_test"
	const body = `{"id":"evt_abcdefghijklmnopqrstu","type":"context.deleted","timestamp":"2026-01-02T03:04:05.000Z","data":{"contextId":"` + ctxID + `","name":"n"}}`
	tests := []struct {
		name      string
		body      string
		signature string
		tolerated bool
		says      string
	}{
		{"signed", body, contextsvc.Sign([]byte(body), secret), true, "ParseData reads deletedBy as zero (absent)"},
		{"signed with another secret", body, contextsvc.Sign([]byte(body), "other"), false, "does not match"},
		{"unsigned", body, "", false, "missing webhook signature"},
		{"malformed", `{"id":""}`, contextsvc.Sign([]byte(`{"id":""}`), secret), false, "malformed event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			if tt.signature != "" {
				h.Set(contract.HeaderSignature, tt.signature)
			}
			v := contract.JudgeDelivery([]byte(tt.body), contract.ReadDelivery([]byte(tt.body), h, secret))
			if v.Tolerated != tt.tolerated || !strings.Contains(v.SDK, tt.says) {
				t.Errorf("verdict %+v, want tolerated %t saying %q", v, tt.tolerated, tt.says)
			}
		})
	}
}
