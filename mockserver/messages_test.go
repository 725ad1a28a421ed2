package mockserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// TestErrorMessagesSayWhatIsWrong: an error body reads as written (no
// "\u003c" for '<') and names what is wrong: the number given, the valid
// event types, the tag at fault and how many were given.
func TestErrorMessagesSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := create(t, ts, `{"name":"Doc"}`)
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"content":"two"}`})
	hook := registerHook(t, ts, "https://hooks.example.com/in", "s", "context.created")
	tags := func(n, distinct int) string {
		l := make([]string, n)
		for i := range l {
			l[i] = fmt.Sprint("t", i%distinct)
		}
		return mustJSON(map[string]any{"name": "a", "tags": l})
	}
	const types = "context.created, context.updated, context.deleted, context.published, context.version.created, " +
		"team.member.added, team.member.removed, export.completed"
	tests := []struct {
		name   string
		c      call
		status int
		want   string // the message, whole
	}{
		{"no key", call{method: "GET", path: "/v1/contexts", key: "-"}, 401,
			"missing or invalid API key: send Authorization: Bearer <key>"},
		{"a path with markup", call{method: "GET", path: "/v1/<b>&c"}, 404, "no such path: /v1/<b>&c"},
		{"a version past an int", call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=99999999999999999999999"}, 404,
			"context " + c.ID + " has no version 99999999999999999999999: its versions are 1 to 2"},
		{"a version not yet made", call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=3"}, 404,
			"context " + c.ID + " has no version 3: its versions are 1 to 2"},
		{"an unknown event type", call{method: "POST", path: "/v1/webhooks",
			body: `{"url":"https://hooks.example.com/in","events":["context.created","context.nope"],"secret":"s"}`}, 400,
			`unknown event type "context.nope" (events[1]): each must be one of ` + types},
		{"an unknown event type, admin", call{method: "PATCH", path: "/_mock/webhooks/" + hook, key: "-", body: `{"events":["nope"]}`}, 400,
			`unknown event type "nope" (events[0]): each must be one of ` + types},
		{"a tag too long", call{method: "POST", path: "/v1/contexts", body: `{"name":"a","tags":["ok","fine","` + strings.Repeat("x", 51) + `"]}`}, 400,
			"tags[2] must be 1 to 50 characters, got 51"},
		{"an empty tag", call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"tags":[""]}`}, 400,
			"tags[0] must be 1 to 50 characters, got 0"},
		{"too many tags", call{method: "POST", path: "/v1/contexts", body: tags(25, 25)}, 400,
			"at most 20 tags (after duplicates are dropped), got 25"},
		{"too many tags with duplicates", call{method: "POST", path: "/v1/contexts", body: tags(40, 22)}, 400,
			"at most 20 tags (after duplicates are dropped), got 22"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, ts, tt.c)
			if r.Status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			if strings.Contains(string(r.Body), `\u00`) {
				t.Errorf("the body escapes characters for HTML: %s", r.Body)
			}
			var e httpapi.ErrorBody
			r.json(t, &e)
			if e.Error.Message != tt.want {
				t.Errorf("message %q\nwant    %q", e.Error.Message, tt.want)
			}
		})
	}
}
