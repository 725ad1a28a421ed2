package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// TestContextJSON checks that the hand-written Context and Version shapes
// are what encoding/json makes of contextJSON and versionJSON.
func TestContextJSON(t *testing.T) {
	t.Parallel()
	// The wire shapes of a Context and a Version, as the contract gives
	// them.
	type contextJSON struct {
		ID        string   `json:"id"`
		Name      string   `json:"name"`
		Content   string   `json:"content"`
		Tags      []string `json:"tags"`
		Version   int      `json:"version"`
		CreatedAt string   `json:"createdAt"`
		UpdatedAt string   `json:"updatedAt"`
	}
	type versionJSON struct {
		ContextID string             `json:"contextId"`
		Version   int                `json:"version"`
		Name      string             `json:"name"`
		Content   string             `json:"content"`
		Tags      []string           `json:"tags"`
		CreatedAt string             `json:"createdAt"`
		CreatedBy string             `json:"createdBy"`
		Changes   contextsvc.Changes `json:"changes"`
	}
	at := time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.FixedZone("x", 3600))
	for _, tags := range [][]string{nil, {}, {"a", "<b>"}} {
		name, content := "N \"&\"", "# T\n\nbody\t<x>"
		v := newView("ctx_1", name, content, tags, 7, at, at.Add(time.Hour))
		wantTags := tags
		if wantTags == nil {
			wantTags = []string{}
		}
		want, _ := json.Marshal(contextJSON{ID: "ctx_1", Name: name, Content: content, Tags: wantTags, Version: 7,
			CreatedAt: jsonwire.FormatTime(at), UpdatedAt: jsonwire.FormatTime(at.Add(time.Hour))})
		if diff := cmp.Diff(string(want), string(v.AppendJSON(nil))); diff != "" {
			t.Errorf("context (-encoding/json +hand-written):\n%s", diff)
		}
		sv := Version{Version: 3, Name: name, Content: content, Tags: tags, CreatedAt: at, CreatedBy: "user_1",
			Changes: contextsvc.Changes{SectionsModified: []string{"(preamble)", "A & B"}, WordCountDelta: -4}}
		want, _ = json.Marshal(versionJSON{ContextID: "ctx_1", Version: 3, Name: sv.Name, Content: sv.Content, Tags: wantTags,
			CreatedAt: jsonwire.FormatTime(at), CreatedBy: "user_1", Changes: sv.Changes})
		if diff := cmp.Diff(string(want), string(AppendVersionJSON(nil, "ctx_1", &sv))); diff != "" {
			t.Errorf("version (-encoding/json +hand-written):\n%s", diff)
		}
	}
}
