package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// TestContextJSON checks the hand-written Context, Version and version
// record against what encoding/json writes of their definitions
// (model.ContextJSON, model.VersionJSON, model.VersionRecordJSON), byte
// for byte, over strings that need every escape, lists nil, empty and
// long, and times in other zones and past milliseconds.
func TestContextJSON(t *testing.T) {
	t.Parallel()
	// A list the store holds as nil is written [] (the definitions'
	// encoding/json would write null).
	list := func(ss []string) []string {
		if ss == nil {
			return []string{}
		}
		return ss
	}
	at := time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.FixedZone("x", 3600))
	tests := []struct {
		name          string
		id, user      string
		title, text   string
		tags          []string
		version       int
		created       time.Time
		updated       time.Time
		changes       contextsvc.Changes
		sectionsAsNil bool
	}{
		{name: "plain", id: "ctx_1", user: "user_1", title: "Runbook", text: "# Setup\n\nInstall it.\n", tags: []string{"ops", "db"},
			version: 1, created: at, updated: at, changes: contextsvc.Changes{SectionsModified: []string{"Setup"}, WordCountDelta: 3}},
		{name: "empty", id: "ctx_2", user: "user_2", version: 2, created: at, updated: at.Add(time.Hour), sectionsAsNil: true},
		{name: "no tags, none changed", id: "ctx_3", user: "user_3", title: "T", tags: []string{}, version: 3, created: at, updated: at,
			changes: contextsvc.Changes{SectionsModified: []string{}}},
		{name: "escapes", id: `ctx_"q"\`, user: "user_<&>", title: "N \"&\" <b>\\ \u2028\u2029",
			text: "# T\n\nbody\t<x>\r\n\x00\x01\x1f\x7f \b\f é 日本 😀 \\u0041 </script>",
			tags: []string{"<b>", "a&b", "\"q\"", "é", "\u2028", ""}, version: 7, created: at, updated: at.Add(36 * time.Hour),
			changes: contextsvc.Changes{SectionsModified: []string{"(preamble)", "A & B", "<h1>\t\"x\"", "\u2029"}, WordCountDelta: -4}},
		{name: "far times, big numbers", id: "ctx_4", user: "user_4", title: "x", tags: []string{"a"}, version: 1 << 40,
			created: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), updated: time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.FixedZone("y", -7*3600)),
			changes: contextsvc.Changes{SectionsModified: []string{"s"}, WordCountDelta: 1 << 40}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := newView(tc.id, tc.title, tc.text, tc.tags, tc.version, tc.created, tc.updated)
			want, err := json.Marshal(model.ContextJSON{ID: tc.id, Name: tc.title, Content: tc.text, Tags: list(tc.tags), Version: tc.version,
				CreatedAt: jsonwire.FormatTime(tc.created), UpdatedAt: jsonwire.FormatTime(tc.updated)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(v.AppendJSON(nil))); diff != "" {
				t.Errorf("context (-encoding/json +hand-written):\n%s", diff)
			}

			changes := tc.changes
			if tc.sectionsAsNil {
				changes.SectionsModified = nil
			}
			sv := Version{Version: tc.version, Name: tc.title, Content: tc.text, Tags: tc.tags, CreatedAt: tc.updated, CreatedBy: tc.user,
				Changes: changes}
			rec := model.VersionRecordJSON{Version: tc.version, Name: tc.title, Content: tc.text, Tags: list(tc.tags),
				CreatedAt: jsonwire.FormatTime(tc.updated), CreatedBy: tc.user,
				Changes: contextsvc.Changes{SectionsModified: list(changes.SectionsModified), WordCountDelta: changes.WordCountDelta}}
			want, err = json.Marshal(model.VersionJSON{ContextID: tc.id, VersionRecordJSON: rec})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(AppendVersionJSON([]byte{}, tc.id, &sv))); diff != "" {
				t.Errorf("version (-encoding/json +hand-written):\n%s", diff)
			}
			want, err = json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(AppendVersionRecordJSON(nil, &sv))); diff != "" {
				t.Errorf("version record (-encoding/json +hand-written):\n%s", diff)
			}
		})
	}
}

// TestAsOfVersionJSON: a context as of an earlier version is the Context
// of that version's name, content and tags, updated when it was recorded.
func TestAsOfVersionJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 20, 51, 0, 0, time.UTC)
	v1 := &Version{Version: 1, Name: "One <1>", Content: "a\n", Tags: []string{"x"}, CreatedAt: at, CreatedBy: "user_1"}
	v2 := &Version{Version: 2, Name: "Two", Content: "b\n", Tags: nil, CreatedAt: at.Add(time.Minute), CreatedBy: "user_1"}
	c := NewContext("ctx_1", 1, []*Version{v1, v2})
	c.Analyze(nil)
	var got model.ContextJSON
	if err := json.Unmarshal(c.asOfVersion(v1), &got); err != nil {
		t.Fatal(err)
	}
	want := model.ContextJSON{ID: "ctx_1", Name: "One <1>", Content: "a\n", Tags: []string{"x"}, Version: 1,
		CreatedAt: jsonwire.FormatTime(at), UpdatedAt: jsonwire.FormatTime(at)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("as of version 1 (-want +got):\n%s", diff)
	}
}
