package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// fixtureState is a hand-written state document, as a test that seeds
// fixtures writes one: only the required fields and a few more; content,
// changes, seq, url and retries left to their defaults.
const fixtureState = `{"format":"contextsvc-mock-state","version":1,
"accounts":[{"id":"team-a","contexts":[
 {"id":"ctx_aaaaaaaaaaaaaaaaaaaaaaaa","versions":[
  {"version":1,"name":"Fixture","content":"# One\n\nfirst","tags":["x"],"createdAt":"2026-11-21T12:00:00.000Z","createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"},
  {"version":2,"name":"Fixture","content":"# One\n\nfirst second","tags":["x"],"createdAt":"2026-11-21T12:05:00.000Z","createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"}]},
 {"id":"ctx_bbbbbbbbbbbbbbbbbbbbbbbb","versions":[
  {"version":1,"name":"Second","createdAt":"2026-11-21T12:06:00.000Z","createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"}]}],
 "webhooks":[{"id":"wh_aaaaaaaaaaaaaaaaaaaaaaaa","url":"https://hooks.example.com/in","events":["context.created"],"secret":"whsec_fixture","createdAt":"2026-11-21T12:00:00.000Z"}]}],
"events":[{"id":"evt_aaaaaaaaaaaaaaaaaaaaaaaa","type":"context.created","timestamp":"2026-11-21T12:00:00.000Z","data":{"contextId":"ctx_aaaaaaaaaaaaaaaaaaaaaaaa"}}],
"deliveries":[{"id":"dlv_aaaaaaaaaaaaaaaaaaaaaaaa","eventId":"evt_aaaaaaaaaaaaaaaaaaaaaaaa","webhookId":"wh_aaaaaaaaaaaaaaaaaaaaaaaa","createdAt":"2026-11-21T12:00:00.000Z","nextAttemptAt":"2026-11-22T12:00:00.000Z",
 "attempts":[{"number":1,"scheduledAt":"2026-11-21T12:00:00.000Z","startedAt":"2026-11-21T12:00:00.000Z","durationNs":1000,"statusCode":503,"error":"receiver answered 503"}]}]}`

// TestStateFixture seeds a server with PUT /_mock/state: the contexts
// answer on /v1 with their defaults filled in (changes worked out as
// updates would have), the delivery is pending with its attempt, and the
// document the server gives back is complete.
func TestStateFixture(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, append([]Option{WithClock(NewFakeClock(dlvT0))}, stateKeys...)...)
	if r := do(t, ts, call{method: "PUT", path: "/_mock/state", key: "-", body: fixtureState}); r.Status != 204 {
		t.Fatalf("PUT /_mock/state: %d %s", r.Status, r.Body)
	}
	c, ok := ts.Context("ctx_aaaaaaaaaaaaaaaaaaaaaaaa")
	if !ok {
		t.Fatal("the fixture's context is missing")
	}
	want := StoredContext{
		Account: "team-a", ID: "ctx_aaaaaaaaaaaaaaaaaaaaaaaa", Name: "Fixture", Content: "# One\n\nfirst second", Tags: []string{"x"},
		Version: 2, CreatedAt: dlvT0, UpdatedAt: dlvT0.Add(5 * time.Minute),
		Versions: []StoredVersion{
			{Version: 1, Name: "Fixture", Content: "# One\n\nfirst", Tags: []string{"x"}, CreatedAt: dlvT0, CreatedBy: "user_aaaaaaaaaaaaaaaaaaaaaaaa",
				Changes: contextsvc.Changes{SectionsModified: []string{"One"}, WordCountDelta: 2}},
			{Version: 2, Name: "Fixture", Content: "# One\n\nfirst second", Tags: []string{"x"}, CreatedAt: dlvT0.Add(5 * time.Minute),
				CreatedBy: "user_aaaaaaaaaaaaaaaaaaaaaaaa", Changes: contextsvc.Changes{SectionsModified: []string{"One"}, WordCountDelta: 1}},
		},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("fixture context (-want +got):\n%s", diff)
	}
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts/ctx_bbbbbbbbbbbbbbbbbbbbbbbb", key: "sk_state_a"}); r.Status != 200 ||
		!strings.Contains(string(r.Body), `"content":"","tags":[],"version":1`) {
		t.Errorf("GET the second context: %d %s", r.Status, r.Body)
	}
	d, ok := ts.Delivery("dlv_aaaaaaaaaaaaaaaaaaaaaaaa")
	if !ok || d.State != DeliveryPending || len(d.Attempts) != 1 || d.URL != "https://hooks.example.com/in" ||
		!d.NextAttemptAt.Equal(dlvT0.Add(24*time.Hour)) || d.EventType != contextsvc.EventContextCreated {
		t.Errorf("fixture delivery: %+v", d)
	}
	doc := do(t, ts, call{method: "GET", path: "/_mock/state", key: "-"})
	for _, want := range []string{`"seq":2,"versions"`, `"contextSeq":2`, `"retries":1`, `"active":true`, `"secret":"whsec_fixture"`,
		`"changes":{"sections_modified":["One"],"word_count_delta":1}`} {
		if !strings.Contains(string(doc.Body), want) {
			t.Errorf("GET /_mock/state lacks %s:\n%s", want, doc.Body)
		}
	}
	// A new context continues the sequence.
	c3 := create(t, ts, `{"name":"Third"}`)
	if l := ts.Contexts("team-a"); len(l) != 3 || l[2].ID != c3.ID {
		t.Errorf("contexts after a create: %v", l)
	}
}

// stateCase is one way a document can be wrong.
type stateCase struct {
	name     string
	doc      string // the whole document; "" means fixtureState with old replaced by new
	old, new string
	path     string // the StateError's Path
	msg      string // in its Message
}

func (c stateCase) document(t *testing.T) string {
	if c.doc != "" || c.old == "" {
		return c.doc
	}
	if strings.Count(fixtureState, c.old) < 1 {
		t.Fatalf("%s: %q is not in the fixture", c.name, c.old)
	}
	return strings.Replace(fixtureState, c.old, c.new, 1)
}

const (
	fxVersion1 = `{"version":1,"name":"Fixture","content":"# One\n\nfirst","tags":["x"],"createdAt":"2026-11-21T12:00:00.000Z","createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"}`
	fxContext2 = `{"id":"ctx_bbbbbbbbbbbbbbbbbbbbbbbb","versions":[`
	fxWebhook  = `{"id":"wh_aaaaaaaaaaaaaaaaaaaaaaaa","url":"https://hooks.example.com/in","events":["context.created"],"secret":"whsec_fixture","createdAt":"2026-11-21T12:00:00.000Z"}`
	fxAttempt  = `{"number":1,"scheduledAt":"2026-11-21T12:00:00.000Z","startedAt":"2026-11-21T12:00:00.000Z","durationNs":1000,"statusCode":503,"error":"receiver answered 503"}`
	v0         = "accounts[0].contexts[0].versions[0]"
)

var badStates = []stateCase{
	{name: "empty", doc: " ", path: "", msg: "the document is empty"},
	{name: "cut short", doc: fixtureState[:len(fixtureState)/2], path: "", msg: "the document ends early"},
	{name: "malformed", old: `"format":`, new: `"format"`, path: "", msg: "malformed JSON at byte"},
	{name: "cut short in the format", doc: `{"format":"contextsvc-mock-st`, path: "", msg: "the document ends early, at byte 29"},
	{name: "cut short in the salt", doc: `{"format":"contextsvc-mock-state","version":1,"cursorSalt":"0a1b`, path: "", msg: "the document ends early"},
	{name: "bad escape in the format", doc: `{"format":"contextsvc-mock-stat\e"}`, path: "", msg: "malformed JSON at byte"},
	{name: "cut short in a time", doc: fixtureState[:strings.Index(fixtureState, `"createdAt":"`)+len(`"createdAt":"2026-11-21T12:0`)], path: "", msg: "the document ends early"},
	{name: "not an object", doc: `[{"format":"contextsvc-mock-state"}]`, path: "", msg: "must be a JSON object"},
	{name: "data after the end", old: `}]}]}`, new: `}]}]} {}`, path: "", msg: "more data after the document's end"},
	{name: "another format", old: `"contextsvc-mock-state"`, new: `"openapi"`, path: "format", msg: "no contextsvc-mock state document"},
	{name: "no format", old: `"format":"contextsvc-mock-state",`, new: ``, path: "format", msg: "is missing"},
	{name: "no version", old: `"version":1,`, new: ``, path: "version", msg: "is missing"},
	{name: "version 0", old: `"version":1,`, new: `"version":0,`, path: "version", msg: "from 1"},
	{name: "version as a string", old: `"version":1,`, new: `"version":"1",`, path: "version", msg: "whole number"},
	{name: "unknown top-level field", old: `"version":1,`, new: `"version":1,"contexts":[],`, path: "contexts", msg: "unknown field"},
	{name: "a field twice", old: `"version":1,`, new: `"version":1,"version":1,`, path: "version", msg: "appears twice"},
	{name: "bad cursor salt", old: `"version":1,`, new: `"version":1,"cursorSalt":"XYZ",`, path: "cursorSalt", msg: "32 lowercase hexadecimal"},
	{name: "negative eventSeq", old: `"version":1,`, new: `"version":1,"eventSeq":-1,`, path: "eventSeq", msg: "whole number"},
	{name: "accounts not an array", old: `"accounts":[{"id":"team-a",`, new: `"accounts":{"x":[{"id":"team-a",`, path: "accounts", msg: "must be an array"},
	{name: "account without id", old: `{"id":"team-a",`, new: `{`, path: "accounts[0].id", msg: "is required"},
	{name: "account of no key", old: `{"id":"team-a",`, new: `{"id":"team-z",`, path: "accounts[0].id", msg: `no key of this server belongs to account "team-z"`},
	{name: "account twice", old: `"accounts":[`, new: `"accounts":[{"id":"team-a"},`, path: "accounts[1].id", msg: "appears twice"},
	{name: "account field unknown", old: `{"id":"team-a",`, new: `{"id":"team-a","plan":"pro",`, path: "accounts[0].plan", msg: "unknown field"},
	{name: "context id", old: `"ctx_aaaaaaaaaaaaaaaaaaaaaaaa","versions"`, new: `"ctx_1","versions"`, path: "accounts[0].contexts[0].id", msg: "is not a context id"},
	{name: "context id twice", old: `"ctx_bbbbbbbbbbbbbbbbbbbbbbbb"`, new: `"ctx_aaaaaaaaaaaaaaaaaaaaaaaa"`, path: "accounts[0].contexts[1].id", msg: "appears twice"},
	{name: "no versions", old: fxContext2, new: `{"id":"ctx_bbbbbbbbbbbbbbbbbbbbbbbb","versions":[]},{"id":"ctx_cccccccccccccccccccccccc","versions":[`, path: "accounts[0].contexts[1].versions", msg: "at least one"},
	{name: "seq going down", old: fxContext2, new: `{"id":"ctx_bbbbbbbbbbbbbbbbbbbbbbbb","seq":1,"versions":[`, path: "accounts[0].contexts[1].seq", msg: "creation order"},
	{name: "contextSeq below the last seq", old: `{"id":"team-a",`, new: `{"id":"team-a","contextSeq":1,`, path: "accounts[0].contextSeq", msg: "below the last context's seq 2"},
	{name: "versions out of order", old: `{"version":2,`, new: `{"version":3,`, path: "accounts[0].contexts[0].versions[1].version", msg: "this one must be 2"},
	{name: "unknown version field", old: `"content":"# One\n\nfirst",`, new: `"contnet":"# One\n\nfirst",`, path: v0 + ".contnet", msg: "unknown field"},
	{name: "null tags", old: `"tags":["x"],"createdAt":"2026-11-21T12:00:00.000Z"`, new: `"tags":null,"createdAt":"2026-11-21T12:00:00.000Z"`, path: v0 + ".tags", msg: "must not be null"},
	{name: "no name", old: `"name":"Fixture","content":"# One\n\nfirst",`, new: `"content":"# One\n\nfirst",`, path: v0 + ".name", msg: "is required"},
	{name: "empty name", old: `"name":"Fixture","content":"# One\n\nfirst",`, new: `"name":"","content":"# One\n\nfirst",`, path: v0 + ".name", msg: "1 to 200 characters"},
	{name: "white-space name", old: `"name":"Fixture","content":"# One\n\nfirst",`, new: `"name":" \u3000 ","content":"# One\n\nfirst",`, path: v0 + ".name", msg: "only white space"},
	{name: "long name", old: `"name":"Fixture","content":"# One\n\nfirst",`, new: `"name":"` + strings.Repeat("é", 201) + `","content":"# One\n\nfirst",`, path: v0 + ".name", msg: "got 201"},
	{name: "control character in name", old: `"name":"Fixture","content":"# One\n\nfirst",`, new: `"name":"Fix\u0007","content":"# One\n\nfirst",`, path: v0 + ".name", msg: "control characters"},
	{name: "lone surrogate in content", old: `"content":"# One\n\nfirst"`, new: `"content":"# One\n\n\ud800"`, path: v0 + ".content", msg: "lone UTF-16 surrogate"},
	{name: "NUL in content", old: `"content":"# One\n\nfirst"`, new: `"content":"# One\u0000"`, path: v0 + ".content", msg: "control characters"},
	{name: "content over 1,000,000 bytes", old: `"content":"# One\n\nfirst"`, new: `"content":"` + strings.Repeat("ü", 500_001) + `"`, path: v0 + ".content", msg: "at most 1000000 bytes"},
	{name: "21 tags", old: `"tags":["x"],"createdAt":"2026-11-21T12:00:00.000Z"`, new: `"tags":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"],"createdAt":"2026-11-21T12:00:00.000Z"`, path: v0 + ".tags", msg: "at most 20 tags"},
	{name: "empty tag", old: `"tags":["x"],"createdAt":"2026-11-21T12:00:00.000Z"`, new: `"tags":[""],"createdAt":"2026-11-21T12:00:00.000Z"`, path: v0 + ".tags", msg: "1 to 50 characters"},
	{name: "time without milliseconds", old: `"createdAt":"2026-11-21T12:00:00.000Z","createdBy"`, new: `"createdAt":"2026-11-21T12:00:00Z","createdBy"`, path: v0 + ".createdAt", msg: "RFC 3339"},
	{name: "no such day", old: `"createdAt":"2026-11-21T12:00:00.000Z","createdBy"`, new: `"createdAt":"2026-02-30T12:00:00.000Z","createdBy"`, path: v0 + ".createdAt", msg: "RFC 3339"},
	{name: "createdBy no user id", old: `"createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"}`, new: `"createdBy":"alice"}`, path: v0 + ".createdBy", msg: "not a user id"},
	{name: "changes of the wrong shape", old: fxVersion1, new: strings.TrimSuffix(fxVersion1, "}") + `,"changes":{"sections_modified":"One","word_count_delta":1}}`, path: v0 + ".changes.sections_modified", msg: "array of strings"},
	{name: "changes without delta", old: fxVersion1, new: strings.TrimSuffix(fxVersion1, "}") + `,"changes":{"sections_modified":[]}}`, path: v0 + ".changes.word_count_delta", msg: "is required"},
	{name: "http webhook url", old: `"url":"https://hooks.example.com/in"`, new: `"url":"http://hooks.example.com/in"`, path: "accounts[0].webhooks[0].url", msg: "https"},
	{name: "webhook url with a space", old: `"url":"https://hooks.example.com/in"`, new: `"url":"https://hooks.example.com/a b"`, path: "accounts[0].webhooks[0].url", msg: "printable ASCII"},
	{name: "webhook id", old: `"id":"wh_aaaaaaaaaaaaaaaaaaaaaaaa","url"`, new: `"id":"webhook-1","url"`, path: "accounts[0].webhooks[0].id", msg: "is not a webhook id"},
	{name: "webhook twice", old: fxWebhook, new: fxWebhook + "," + fxWebhook, path: "accounts[0].webhooks[1].id", msg: "appears twice"},
	{name: "no events", old: `"events":["context.created"]`, new: `"events":[]`, path: "accounts[0].webhooks[0].events", msg: "at least one"},
	{name: "unknown event type", old: `"events":["context.created"]`, new: `"events":["context.exploded"]`, path: "accounts[0].webhooks[0].events", msg: `unknown event type "context.exploded"`},
	{name: "empty secret", old: `"secret":"whsec_fixture"`, new: `"secret":""`, path: "accounts[0].webhooks[0].secret", msg: "1 to 256 characters"},
	{name: "long secret", old: `"secret":"whsec_fixture"`, new: `"secret":"` + strings.Repeat("s", 257) + `"`, path: "accounts[0].webhooks[0].secret", msg: "1 to 256 characters"},
	{name: "delivery to an inactive webhook", old: `"secret":"whsec_fixture",`, new: `"secret":"whsec_fixture","active":false,`, path: "deliveries[0].webhookId", msg: "is inactive"},
	{name: "account name", old: `{"id":"team-a",`, new: `{"id":"team a",`, path: "accounts[0].id", msg: "may hold only"},
	{name: "webhook seq twice", old: fxWebhook, new: strings.Replace(fxWebhook, `","url"`, `","seq":3,"url"`, 1) + "," +
		strings.Replace(strings.Replace(fxWebhook, "wh_aaaa", "wh_bbbb", 1), `","url"`, `","seq":3,"url"`, 1), path: "accounts[0].webhooks[1].seq", msg: "another webhook's seq"},
	{name: "active as a string", old: `"secret":"whsec_fixture",`, new: `"secret":"whsec_fixture","active":"yes",`, path: "accounts[0].webhooks[0].active", msg: "true or false"},
	{name: "event id", old: `"id":"evt_aaaaaaaaaaaaaaaaaaaaaaaa","type"`, new: `"id":"evt_x","type"`, path: "events[0].id", msg: "is not a event id"},
	{name: "event type with a space", old: `"type":"context.created"`, new: `"type":"context created"`, path: "events[0].type", msg: "printable ASCII"},
	{name: "event data not an object", old: `"data":{"contextId":"ctx_aaaaaaaaaaaaaaaaaaaaaaaa"}`, new: `"data":[1]`, path: "events[0].data", msg: "JSON object"},
	{name: "event with an extra field", old: `"type":"context.created"`, new: `"type":"context.created","account":"team-a"`, path: "events[0].account", msg: "unknown field"},
	{name: "delivery id", old: `"id":"dlv_aaaaaaaaaaaaaaaaaaaaaaaa"`, new: `"id":"dlv_"`, path: "deliveries[0].id", msg: "is not a delivery id"},
	{name: "delivery of no event", old: `"eventId":"evt_aaaaaaaaaaaaaaaaaaaaaaaa"`, new: `"eventId":"evt_bbbbbbbbbbbbbbbbbbbbbbbb"`, path: "deliveries[0].eventId", msg: `no event "evt_bbbbbbbbbbbbbbbbbbbbbbbb" in events`},
	{name: "delivery to no webhook", old: `"webhookId":"wh_aaaaaaaaaaaaaaaaaaaaaaaa"`, new: `"webhookId":"wh_bbbbbbbbbbbbbbbbbbbbbbbb"`, path: "deliveries[0].webhookId", msg: "no webhook"},
	{name: "delivery with a bad url", old: `"webhookId":"wh_aaaaaaaaaaaaaaaaaaaaaaaa",`, new: `"webhookId":"wh_aaaaaaaaaaaaaaaaaaaaaaaa","url":"ftp://x",`, path: "deliveries[0].url", msg: "https"},
	{name: "attempts out of order", old: `{"number":1,`, new: `{"number":2,`, path: "deliveries[0].attempts[0].number", msg: "this one must be 1"},
	{name: "attempt without a start", old: `"startedAt":"2026-11-21T12:00:00.000Z",`, new: ``, path: "deliveries[0].attempts[0].startedAt", msg: "is required"},
	{name: "attempt status out of range", old: `"statusCode":503`, new: `"statusCode":1000`, path: "deliveries[0].attempts[0].statusCode", msg: "0 to 999"},
	{name: "negative duration", old: `"durationNs":1000`, new: `"durationNs":-1`, path: "deliveries[0].attempts[0].durationNs", msg: "whole number"},
	{name: "long snippet", old: fxAttempt, new: strings.TrimSuffix(fxAttempt, "}") + `,"responseSnippet":"` + strings.Repeat("x", delivery.SnippetLimit+1) + `"}`, path: "deliveries[0].attempts[0].responseSnippet", msg: "at most 4096"},
	{name: "trace id not hex", old: fxAttempt, new: strings.TrimSuffix(fxAttempt, "}") + `,"traceId":"4BF92F3577B34DA6A3CE929D0E0E4736"}`, path: "deliveries[0].attempts[0].traceId", msg: "32 lowercase hex digits"},
	{name: "trace id zero", old: fxAttempt, new: strings.TrimSuffix(fxAttempt, "}") + `,"traceId":"00000000000000000000000000000000"}`, path: "deliveries[0].attempts[0].traceId", msg: "not all zero"},
	{name: "negative retries", old: `"nextAttemptAt":"2026-11-22T12:00:00.000Z",`, new: `"nextAttemptAt":"2026-11-22T12:00:00.000Z","retries":-1,`, path: "deliveries[0].retries", msg: "whole number"},
}

// TestLoadStateRefuses feeds documents that are wrong in one way each, to
// LoadState, to PUT /_mock/state and as a state file: each is refused with
// an error naming where and what, and nothing changes (the server keeps
// its state; the file is not touched).
func TestLoadStateRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range badStates {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := tc.document(t)
			clock := NewFakeClock(dlvT0)
			ts := NewTestServer(t, append([]Option{WithClock(clock)}, stateKeys...)...)
			create(t, ts, `{"name":"Already here"}`)
			before := saveState(t, ts.Server)

			err := ts.LoadState(strings.NewReader(doc))
			var se *StateError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidState) {
				t.Fatalf("LoadState: %v, want a *StateError", err)
			}
			if se.Path != tc.path || !strings.Contains(se.Message, tc.msg) {
				t.Errorf("LoadState: path %q message %q; want path %q, a message with %q", se.Path, se.Message, tc.path, tc.msg)
			}
			if strings.Contains(se.Error(), "whsec_fixture") && strings.Contains(tc.path, "secret") {
				t.Errorf("the error shows the secret: %v", se)
			}
			if after := saveState(t, ts.Server); !bytes.Equal(before, after) {
				t.Errorf("a refused document changed the state:\n%s\n---\n%s", before, after)
			}

			r := do(t, ts, call{method: "PUT", path: "/_mock/state", key: "-", body: doc})
			typ, param := r.errorOf(t)
			var e httpapi.ErrorBody
			r.json(t, &e)
			wantParam := adminapi.TopField(se.Path)
			if r.Status != 400 || typ != "invalid_request" || param != wantParam || !strings.Contains(e.Error.Message, tc.msg) ||
				(tc.path != "" && !strings.HasPrefix(e.Error.Message, tc.path+": ")) {
				t.Errorf("PUT: %d %s param %q %q; want 400 param %q, %q in the message after its path", r.Status, typ, param, e.Error.Message, wantParam, tc.msg)
			}
			if after := saveState(t, ts.Server); !bytes.Equal(before, after) {
				t.Error("a refused PUT changed the state")
			}

			if tc.path == "accounts[0].id" && strings.Contains(tc.msg, "no key") {
				return // a state file may hold accounts no key has (TestStateFileKeepsUnknownAccounts)
			}
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(doc), 0o640); err != nil {
				t.Fatal(err)
			}
			_, err = Open(append([]Option{WithClock(clock), WithStateFile(path)}, stateKeys...)...)
			if !errors.Is(err, ErrInvalidState) || !strings.Contains(err.Error(), "state file "+path+": ") ||
				!strings.Contains(err.Error(), tc.msg) || (tc.path != "" && !strings.Contains(err.Error(), tc.path+": ")) {
				t.Errorf("Open: %v; want the file's path, %q and %q", err, tc.path, tc.msg)
			}
			checkUntouched(t, path, []byte(doc), 0o640)
		})
	}
}

// checkUntouched fails unless the file at path holds exactly want with
// mode perm, and nothing else is beside it (no lock file).
func checkUntouched(t *testing.T, path string, want []byte, perm os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("the refused file was changed (%v)", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != perm {
		t.Errorf("the refused file's mode: %v %v, want %v", fi.Mode().Perm(), err, perm)
	}
	// Only the file: the lock file Open made before reading it is
	// removed with the refusal.
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if n := e.Name(); n != filepath.Base(path) {
			t.Errorf("beside the refused file: %v", entries)
			break
		}
	}
}

// TestStateNewerFormat: a document of a newer format version is refused,
// with an error that says so (ErrStateTooNew), and its file is left as it
// is.
func TestStateNewerFormat(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(fixtureState, `"version":1,`, `"version":2,`, 1)
	// A newer format may have fields this one does not know: the version,
	// written first, is what is reported.
	doc = strings.Replace(doc, `"accounts":[`, `"tenants":[],"accounts":[`, 1)
	s := New(stateKeys...)
	err := s.LoadState(strings.NewReader(doc))
	var se *StateError
	if !errors.Is(err, ErrStateTooNew) || !errors.Is(err, ErrInvalidState) || !errors.As(err, &se) || se.Path != "version" ||
		!strings.Contains(se.Message, "format version 2 is newer than this mock server reads (1)") {
		t.Fatalf("LoadState: %v", err)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(append([]Option{WithStateFile(path)}, stateKeys...)...)
	if !errors.Is(err, ErrStateTooNew) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open: %v", err)
	}
	checkUntouched(t, path, []byte(doc), 0o600)
}

// TestStateFileUnreadable: a state file that cannot be read stops the
// start with an error naming it and why.
func TestStateFileUnreadable(t *testing.T) {
	t.Parallel()
	t.Run("a directory", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "state.json")
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := Open(WithStateFile(path))
		if err == nil || errors.Is(err, ErrInvalidState) || !strings.Contains(err.Error(), "state file "+path+": it is a directory") {
			t.Errorf("Open: %v", err)
		}
	})
	t.Run("no permission", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() == 0 {
			t.Skip("running as root, who may read any file")
		}
		path := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(path, []byte(fixtureState), 0o000); err != nil {
			t.Fatal(err)
		}
		_, err := Open(WithStateFile(path))
		if err == nil || !strings.Contains(err.Error(), "state file "+path+": cannot read it:") || !errors.Is(err, os.ErrPermission) {
			t.Errorf("Open: %v", err)
		}
		checkUntouched(t, path, []byte(fixtureState), 0)
	})
	t.Run("no directory", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "missing", "state.json")
		_, err := Open(WithStateFile(path))
		if err == nil || !strings.Contains(err.Error(), "state file "+path+": cannot write a file in its directory") {
			t.Errorf("Open: %v", err)
		}
	})
	t.Run("New panics", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), path) {
				t.Errorf("New with a bad state file: %v, want a panic naming it", v)
			}
		}()
		New(WithStateFile(path))
	})
}

// TestStateFileKeepsUnknownAccounts: a state file's account that no key
// belongs to is kept at start (unreachable, saved again), and PUT of that
// same document is then accepted, as it names only the server's accounts.
func TestStateFileKeepsUnknownAccounts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	doc := strings.Replace(fixtureState, `{"id":"team-a",`, `{"id":"team-gone",`, 1)
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	var log deliverytest.LogBuffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	ts := NewTestServer(t, append([]Option{WithClock(NewFakeClock(dlvT0)), WithStateFile(path), WithLogger(logger)}, stateKeys...)...)
	if l := ts.Contexts("team-gone"); len(l) != 2 {
		t.Errorf("the unknown account's contexts: %v", l)
	}
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts/ctx_aaaaaaaaaaaaaaaaaaaaaaaa"}); r.Status != 404 {
		t.Errorf("a key of another account reads it: %d", r.Status)
	}
	if !strings.Contains(log.String(), "accounts=[team-gone]") {
		t.Errorf("no warning about the account:\n%s", log.String())
	}
	// The server's own document (the unknown account included) goes back in.
	if r := do(t, ts, call{method: "PUT", path: "/_mock/state", key: "-", body: string(saveState(t, ts.Server))}); r.Status != 204 {
		t.Errorf("PUT of the server's own document: %d %s", r.Status, r.Body)
	}
	// Publishing its context works without a key's user.
	if _, err := ts.Publish(t.Context(), "ctx_aaaaaaaaaaaaaaaaaaaaaaaa"); err != nil {
		t.Error(err)
	}
	ev := ts.Events()
	if len(ev) != 1 || !strings.Contains(string(ev[0].Data), `"publishedBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"`) {
		t.Errorf("publish in a keyless account: %v", ev)
	}
}

// TestStateHTTPSOnly: a server that refuses http webhooks refuses a state
// holding one, as registration would.
func TestStateHTTPSOnly(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(fixtureState, `"url":"https://hooks.example.com/in"`, `"url":"http://127.0.0.1:9/in"`, 1)
	if err := New(stateKeys...).LoadState(strings.NewReader(doc)); err != nil {
		t.Fatalf("an http loopback webhook: %v", err)
	}
	err := New(append([]Option{WithHTTPSOnlyWebhooks(true)}, stateKeys...)...).LoadState(strings.NewReader(doc))
	var se *StateError
	if !errors.As(err, &se) || se.Path != "accounts[0].webhooks[0].url" || se.Message != "url must use https" {
		t.Errorf("https-only: %v", err)
	}
}

// whiteSpace is an endless run of JSON white space.
type whiteSpace struct{}

func (whiteSpace) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestStatePutSizeBound: PUT /_mock/state takes at most 256 MiB. A body
// that says it is larger is refused at once, and one of unknown length is
// refused once the bound is read, not read to its end; either is a 413
// with the contract's error body, and the state stays as it was.
func TestStatePutSizeBound(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, append([]Option{WithClock(NewFakeClock(dlvT0))}, stateKeys...)...)
	create(t, ts, `{"name":"Kept"}`)
	before := saveState(t, ts.Server)
	put := func(body io.Reader, length int64) (*httptest.ResponseRecorder, *countingReader) {
		src := &countingReader{r: body}
		// httptest's default Host (example.com) is no admin host.
		req := httptest.NewRequest("PUT", "http://127.0.0.1/_mock/state", src)
		req.ContentLength = length
		rec := httptest.NewRecorder()
		ts.Server.ServeHTTP(rec, req)
		return rec, src
	}
	check := func(what string, rec *httptest.ResponseRecorder) {
		t.Helper()
		var e httpapi.ErrorBody
		if rec.Code != http.StatusRequestEntityTooLarge || json.Unmarshal(rec.Body.Bytes(), &e) != nil ||
			e.Error.Type != "payload_too_large" || !strings.Contains(e.Error.Message, "at most 256 MiB") {
			t.Errorf("%s: %d %s", what, rec.Code, rec.Body)
		}
		if after := saveState(t, ts.Server); !bytes.Equal(before, after) {
			t.Errorf("%s changed the state", what)
		}
	}
	rec, src := put(strings.NewReader(fixtureState), adminapi.MaxStateBody+1)
	check("a Content-Length over the bound", rec)
	if n := src.n.Load(); n != 0 {
		t.Errorf("%d bytes read of a body declared too large", n)
	}
	if testing.Short() || raceEnabled {
		// The rest reads 256 MiB in one goroutine: nothing for the race
		// detector to see, and minutes of its checks.
		return
	}
	rec, src = put(io.MultiReader(strings.NewReader(`{"format":"contextsvc-mock-state","version":1,"accounts":`), io.LimitReader(whiteSpace{}, 1<<30)), -1)
	check("an endless body of unknown length", rec)
	if n := src.n.Load(); n > adminapi.MaxStateBody+1<<20 {
		t.Errorf("%d bytes read of an endless body", n)
	}
}
