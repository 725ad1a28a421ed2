package contextsvc

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseEventTypedData(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 11, 21, 20, 51, 0, 123_000_000, time.UTC)
	cases := []struct {
		typ  EventType
		name string // the type's name as the reference spells it
		data string
		want any
		get  func(*Event) (any, error)
	}{
		{EventContextCreated, "context.created", `{"contextId":"ctx_1","name":"Plan","version":1,"tags":["a","b"],"createdBy":"user_1"}`,
			&ContextCreatedData{ContextID: "ctx_1", Name: "Plan", Version: 1, Tags: []string{"a", "b"}, CreatedBy: "user_1"},
			func(e *Event) (any, error) { return e.ContextCreated() }},
		{EventContextUpdated, "context.updated", `{"contextId":"ctx_1","name":"Plan","version":3,"updatedBy":"user_1","changes":{"sections_modified":["Intro","(preamble)"],"word_count_delta":-4}}`,
			&ContextUpdatedData{ContextID: "ctx_1", Name: "Plan", Version: 3, UpdatedBy: "user_1", Changes: Changes{SectionsModified: []string{"Intro", "(preamble)"}, WordCountDelta: -4}},
			func(e *Event) (any, error) { return e.ContextUpdated() }},
		{EventContextDeleted, "context.deleted", `{"contextId":"ctx_1","name":"Plan","deletedBy":"user_2"}`,
			&ContextDeletedData{ContextID: "ctx_1", Name: "Plan", DeletedBy: "user_2"},
			func(e *Event) (any, error) { return e.ContextDeleted() }},
		{EventContextPublished, "context.published", `{"contextId":"ctx_1","name":"Plan","version":2,"publishedBy":"user_3"}`,
			&ContextPublishedData{ContextID: "ctx_1", Name: "Plan", Version: 2, PublishedBy: "user_3"},
			func(e *Event) (any, error) { return e.ContextPublished() }},
		{EventContextVersionCreated, "context.version.created", `{"contextId":"ctx_1","version":2,"createdBy":"user_1"}`,
			&ContextVersionCreatedData{ContextID: "ctx_1", Version: 2, CreatedBy: "user_1"},
			func(e *Event) (any, error) { return e.ContextVersionCreated() }},
		{EventTeamMemberAdded, "team.member.added", `{"teamId":"team_1","userId":"user_9","role":"editor"}`,
			&TeamMemberAddedData{TeamID: "team_1", UserID: "user_9", Role: "editor"},
			func(e *Event) (any, error) { return e.TeamMemberAdded() }},
		{EventTeamMemberRemoved, "team.member.removed", `{"teamId":"team_1","userId":"user_9","role":"editor"}`,
			&TeamMemberRemovedData{TeamID: "team_1", UserID: "user_9", Role: "editor"},
			func(e *Event) (any, error) { return e.TeamMemberRemoved() }},
		{EventExportCompleted, "export.completed", `{"exportId":"exp_1","contextId":"ctx_1","version":2,"format":"pdf","sizeBytes":123456789012}`,
			&ExportCompletedData{ExportID: "exp_1", ContextID: "ctx_1", Version: 2, Format: "pdf", SizeBytes: 123456789012},
			func(e *Event) (any, error) { return e.ExportCompleted() }},
	}
	// The table lists the reference's eight types in its order, so this
	// also checks that AllEventTypes is exactly that list.
	var tableTypes []EventType
	for _, tc := range cases {
		tableTypes = append(tableTypes, tc.typ)
	}
	if d := cmp.Diff(tableTypes, AllEventTypes()); d != "" {
		t.Fatalf("AllEventTypes differs from the reference's list (-table +AllEventTypes):\n%s", d)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The constant must spell the wire name exactly; the body below
			// uses the literal, not the constant.
			if string(tc.typ) != tc.name {
				t.Errorf("constant is %q, the reference says %q", tc.typ, tc.name)
			}
			if !tc.typ.Known() {
				t.Errorf("%q is not Known", tc.typ)
			}
			body := `{"id":"evt_1","type":"` + tc.name + `","timestamp":"2026-11-21T20:51:00.123Z","data":` + tc.data + `}`
			ev, err := ParseEvent([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			wantEv := &Event{ID: "evt_1", Type: tc.typ, Timestamp: ts, Data: json.RawMessage(tc.data)}
			if d := cmp.Diff(wantEv, ev); d != "" {
				t.Errorf("event (-want +got):\n%s", d)
			}
			got, err := ev.ParseData()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ParseData (-want +got):\n%s", d)
			}
			typed, err := tc.get(ev)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, typed); d != "" {
				t.Errorf("typed accessor (-want +got):\n%s", d)
			}
			// Every other accessor refuses this event.
			other := &Event{ID: ev.ID, Type: "some.other", Data: ev.Data}
			if _, err := tc.get(other); !errors.Is(err, ErrEventTypeMismatch) {
				t.Errorf("accessor on another type: err = %v, want ErrEventTypeMismatch", err)
			}
		})
	}
}

func TestParseEventUnknownTypeKeepsRawData(t *testing.T) {
	t.Parallel()
	body := `{"id":"evt_9","type":"context.archived","timestamp":"2026-11-21T21:00:00+02:00","data":{"anything":[1,2,{"x":null}]},"extra":true}`
	ev, err := ParseEvent([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type.Known() {
		t.Errorf("type %q reported known", ev.Type)
	}
	if !ev.Timestamp.Equal(time.Date(2026, 11, 21, 19, 0, 0, 0, time.UTC)) {
		t.Errorf("timestamp = %v, want 19:00Z", ev.Timestamp)
	}
	got, err := ev.ParseData()
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := got.(json.RawMessage)
	if !ok {
		t.Fatalf("ParseData = %T, want json.RawMessage", got)
	}
	if string(raw) != `{"anything":[1,2,{"x":null}]}` {
		t.Errorf("raw data = %s", raw)
	}
	if _, err := ev.ContextUpdated(); !errors.Is(err, ErrEventTypeMismatch) {
		t.Errorf("ContextUpdated on unknown type: %v", err)
	}
}

func TestParseEventMalformed(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body string }{
		{"empty", ``},
		{"not json", `hello`},
		{"array", `[]`},
		{"null", `null`},
		{"missing id", `{"type":"context.created","timestamp":"2026-11-21T20:51:00Z","data":{}}`},
		{"empty id", `{"id":"","type":"context.created","timestamp":"2026-11-21T20:51:00Z","data":{}}`},
		{"missing type", `{"id":"evt_1","timestamp":"2026-11-21T20:51:00Z","data":{}}`},
		{"missing timestamp", `{"id":"evt_1","type":"x.y","data":{}}`},
		{"null timestamp", `{"id":"evt_1","type":"x.y","timestamp":null}`},
		{"not RFC 3339", `{"id":"evt_1","type":"x.y","timestamp":"21/11/2026"}`},
		{"numeric timestamp", `{"id":"evt_1","type":"x.y","timestamp":1732222260}`},
		{"id not a string", `{"id":7,"type":"x.y","timestamp":"2026-11-21T20:51:00Z"}`},
		{"known type without data", `{"id":"evt_1","type":"context.created","timestamp":"2026-11-21T20:51:00Z"}`},
		{"known type with null data", `{"id":"evt_1","type":"context.created","timestamp":"2026-11-21T20:51:00Z","data":null}`},
		{"known type, data of wrong shape", `{"id":"evt_1","type":"context.updated","timestamp":"2026-11-21T20:51:00Z","data":{"version":"three"}}`},
		{"known type, data not an object", `{"id":"evt_1","type":"export.completed","timestamp":"2026-11-21T20:51:00Z","data":[1]}`},
		{"trailing garbage", `{"id":"evt_1","type":"x.y","timestamp":"2026-11-21T20:51:00Z"} {}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := ParseEvent([]byte(tc.body))
			if !errors.Is(err, ErrMalformedEvent) {
				t.Fatalf("ParseEvent = %+v, %v; want ErrMalformedEvent", ev, err)
			}
			if ev != nil {
				t.Errorf("event returned with error: %+v", ev)
			}
		})
	}
}

func TestParseEventUnknownTypeWithoutData(t *testing.T) {
	t.Parallel()
	ev, err := ParseEvent([]byte(`{"id":"evt_1","type":"x.y","timestamp":"2026-11-21T20:51:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Data != nil {
		t.Errorf("data = %s, want nil", ev.Data)
	}
}

func TestTypedAccessorOnEventWithoutData(t *testing.T) {
	t.Parallel()
	ev := &Event{ID: "evt_1", Type: EventContextDeleted}
	if _, err := ev.ContextDeleted(); !errors.Is(err, ErrMalformedEvent) {
		t.Errorf("err = %v, want ErrMalformedEvent", err)
	}
	if _, err := ev.ParseData(); !errors.Is(err, ErrMalformedEvent) {
		t.Errorf("ParseData err = %v, want ErrMalformedEvent", err)
	}
}

func TestConstructEventVerifiesBeforeParsing(t *testing.T) {
	t.Parallel()
	const secret = "whsec_c"
	good := []byte(`{"id":"evt_1","type":"context.deleted","timestamp":"2026-11-21T20:51:00Z","data":{"contextId":"ctx_1","name":"n","deletedBy":"user_1"}}`)
	ev, err := ConstructEventWithOptions(good, Sign(good, secret), []string{secret}, WithEventReplayWindow(0, 0)) // any age
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "evt_1" || ev.Type != EventContextDeleted {
		t.Errorf("event = %+v", ev)
	}
	// Malformed bytes with a bad signature: the signature error wins,
	// because unverified bytes are never parsed.
	bad := []byte(`not json`)
	if _, err := ConstructEvent(bad, Sign(good, secret), secret); !errors.Is(err, ErrSignatureMismatch) {
		t.Errorf("err = %v, want ErrSignatureMismatch", err)
	}
	// Malformed bytes with a good signature: a parse error.
	_, err = ConstructEvent(bad, Sign(bad, secret), secret)
	if !errors.Is(err, ErrMalformedEvent) || errors.Is(err, ErrInvalidSignature) {
		t.Errorf("err = %v, want ErrMalformedEvent only", err)
	}
}
