package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// TestTriggerOnMock fires each type through the mock's admin API, in the
// key's account, with data of the type's shape about the account's
// context; nothing of the account changes.
func TestTriggerOnMock(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Runbook", "--content", "# Deploy\n\nship it", "--tag", "ops", "-q"))
	c.ok("contexts", "update", id, "--content", "# Deploy\n\nship it today")
	before := len(ts.Events())
	for _, typ := range contextsvc.AllEventTypes() {
		out := c.ok("trigger", string(typ))
		m := regexp.MustCompile(`^Triggered ` + regexp.QuoteMeta(string(typ)) + `: event (evt_[a-z0-9]+) in the mock's account acme`).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("trigger %s printed %q", typ, out)
			continue
		}
		evs := ts.Events()
		ev := evs[len(evs)-1]
		if ev.ID != m[1] || ev.Type != typ || ev.Account != "acme" {
			t.Errorf("trigger %s: the last event is %s %s in %s", typ, ev.ID, ev.Type, ev.Account)
			continue
		}
		parsed, err := contextsvc.ParseEvent(ev.Body)
		if err != nil {
			t.Fatal(err)
		}
		data, err := parsed.ParseData()
		if err != nil {
			t.Errorf("%s: %v", typ, err)
		}
		user := mockserver.AccountUser("acme")
		ok := true
		switch d := data.(type) {
		case *contextsvc.ContextCreatedData:
			ok = d.ContextID == id && d.Name == "Runbook" && d.Version == 1 && strings.Join(d.Tags, ",") == "ops" && d.CreatedBy == user
		case *contextsvc.ContextUpdatedData:
			ok = d.ContextID == id && d.Version == 2 && d.UpdatedBy == user && d.Changes.WordCountDelta == 1 && strings.Join(d.Changes.SectionsModified, ",") == "Deploy"
		case *contextsvc.ContextVersionCreatedData:
			ok = d.ContextID == id && d.Version == 2 && d.CreatedBy == user
		case *contextsvc.ContextDeletedData:
			ok = d.ContextID == id && d.Name == "Runbook" && d.DeletedBy == user
		case *contextsvc.ContextPublishedData:
			ok = d.ContextID == id && d.Version == 2 && d.PublishedBy == user
		case *contextsvc.ExportCompletedData:
			ok = d.ContextID == id && d.Version == 2 && d.Format == "markdown" && d.SizeBytes == int64(len("# Deploy\n\nship it today")) && strings.HasPrefix(d.ExportID, "exp_")
		case *contextsvc.TeamMemberAddedData:
			ok = strings.HasPrefix(d.TeamID, "team_") && strings.HasPrefix(d.UserID, "user_") && d.Role == "member"
		case *contextsvc.TeamMemberRemovedData:
			ok = strings.HasPrefix(d.TeamID, "team_") && strings.HasPrefix(d.UserID, "user_") && d.Role == "member"
		}
		if !ok {
			t.Errorf("%s: data %s", typ, ev.Data)
		}
	}
	if n := len(ts.Events()) - before; n != len(contextsvc.AllEventTypes()) {
		t.Errorf("%d events, want one a type", n)
	}
	if got, _ := ts.Context(id); got.Version != 2 || len(ts.Contexts("acme")) != 1 {
		t.Errorf("the account changed: %+v", got)
	}
}

// TestTriggerEmptyAccount: an account without contexts gets an event
// about a made-up context, in the key's account (not the mock's first).
func TestTriggerEmptyAccount(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t,
		mockserver.WithKey(mockserver.Key{Token: "sk_test_first_account_key", Account: "first"}),
		mockserver.WithKey(mockserver.Key{Token: testKey, Account: "second"}))
	c := &cli{t: t, env: map[string]string{"CONTEXTSVC_BASE_URL": ts.URL, "CONTEXTSVC_API_KEY": testKey}}
	out := c.ok("trigger", "context.updated")
	if !strings.Contains(out, "in the mock's account second, about a made-up context ctx_") {
		t.Errorf("trigger: %q", out)
	}
	evs := ts.Events()
	var data contextsvc.ContextUpdatedData
	if len(evs) != 1 || evs[0].Account != "second" || json.Unmarshal(evs[0].Data, &data) != nil || !strings.HasPrefix(data.ContextID, "ctx_") ||
		data.UpdatedBy != mockserver.AccountUser("second") {
		t.Errorf("events: %+v", evs)
	}
}

// TestTriggerOnDeployment: without the mock's admin API, the /v1 action
// fires the event on a temporary context, which is deleted; a type /v1
// cannot cause exits 3, "not supported here".
func TestTriggerOnDeployment(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t, mockserver.WithAdmin(false))
	for _, tt := range []struct {
		typ  contextsvc.EventType
		did  string
		want []contextsvc.EventType
	}{
		{contextsvc.EventContextCreated, "created and deleted", []contextsvc.EventType{"context.created", "context.version.created", "context.deleted"}},
		{contextsvc.EventContextUpdated, "created, updated and deleted", []contextsvc.EventType{"context.created", "context.version.created", "context.updated", "context.version.created", "context.deleted"}},
		{contextsvc.EventExportCompleted, "created, exported and deleted", []contextsvc.EventType{"context.created", "context.version.created", "export.completed", "context.deleted"}},
		{contextsvc.EventContextDeleted, "created and deleted", []contextsvc.EventType{"context.created", "context.version.created", "context.deleted"}},
		{contextsvc.EventContextVersionCreated, "created and deleted", []contextsvc.EventType{"context.created", "context.version.created", "context.deleted"}},
	} {
		before := len(ts.Events())
		out := c.ok("trigger", string(tt.typ))
		if !regexp.MustCompile(`^Triggered ` + regexp.QuoteMeta(string(tt.typ)) + ` at ` + regexp.QuoteMeta(ts.URL) + `: ` + tt.did + ` the temporary context ctx_[a-z0-9]+ \(contextsvc-trigger-[a-z0-9]{8}\)`).MatchString(out) {
			t.Errorf("trigger %s: %q", tt.typ, out)
		}
		var got []contextsvc.EventType
		for _, ev := range ts.Events()[before:] {
			got = append(got, ev.Type)
		}
		if strings.Join(typeStrings(got), " ") != strings.Join(typeStrings(tt.want), " ") {
			t.Errorf("trigger %s fired %v", tt.typ, got)
		}
	}
	if n := len(ts.Contexts("acme")); n != 0 {
		t.Errorf("%d temporary contexts left", n)
	}
	for _, typ := range []string{"team.member.added", "team.member.removed", "context.published"} {
		r := c.run("trigger", typ)
		if r.code != exitUnsupported || !strings.Contains(r.errOut, "cannot be caused through the /v1 API of a deployment") {
			t.Errorf("trigger %s: exit %d, %q", typ, r.code, r.errOut)
		}
	}
}

// TestTriggerLockedMock: a mock whose admin API asks for credentials
// takes them from the environment, and says which to set without them.
func TestTriggerLockedMock(t *testing.T) {
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("a long passphrase"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	c, ts := newCLI(t, mockserver.WithAdminAuth(strings.NewReader("admin:"+string(hash)+"\n")))
	r := c.run("trigger", "team.member.added")
	if r.code != exitUsage || !strings.Contains(r.errOut, "set CONTEXTSVC_MOCK_ADMIN_USER and CONTEXTSVC_MOCK_ADMIN_PASSWORD") {
		t.Errorf("without credentials: exit %d, %q", r.code, r.errOut)
	}
	c.env["CONTEXTSVC_MOCK_ADMIN_USER"], c.env["CONTEXTSVC_MOCK_ADMIN_PASSWORD"] = "admin", "a long passphrase"
	c.ok("trigger", "team.member.added")
	if evs := ts.Events(); len(evs) != 1 || evs[0].Type != contextsvc.EventTeamMemberAdded {
		t.Errorf("events: %+v", evs)
	}
}

func typeStrings(ts []contextsvc.EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// TestTriggerOwnData: --override, --fixture and --context put data of
// your own in the event the mock fires, held to the contract's schema of
// the event's data: what it refuses is named, and nothing is sent.
func TestTriggerOwnData(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Runbook", "--content", "# Deploy\n\nship it", "-q"))
	c.ok("contexts", "update", id, "--content", "# Deploy\n\nship it today")
	other := strings.TrimSpace(c.ok("contexts", "create", "--name", "Second", "-q"))
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	member := write("member.json", `{"teamId":"team_platform","userId":"user_aaaaaaaaaaaaaaaaaaaaaaaa","role":"admin"}`)
	partial := write("partial.json", `{"name":"From the fixture","tags":["a","b"]}`)
	unknown := write("unknown.json", `{"name":"x","color":"red"}`)
	notJSON := write("notjson.json", `name: x`)
	for _, tt := range []struct {
		args  []string
		stdin string
		check func(d map[string]any) bool
	}{
		{[]string{"trigger", "context.updated", "--override", "name=Release notes", "--override", "changes.word_count_delta=120", "--override", "data.changes.sections_modified.1=Intro"},
			"", func(d map[string]any) bool {
				ch, _ := d["changes"].(map[string]any)
				return d["contextId"] == id && d["name"] == "Release notes" && d["version"] == 2.0 && ch["word_count_delta"] == 120.0 &&
					fmt.Sprint(ch["sections_modified"]) == "[Deploy Intro]"
			}},
		{[]string{"trigger", "export.completed", "--context", other, "--override", "format=pdf", "--override", "sizeBytes=2048"},
			"", func(d map[string]any) bool {
				return d["contextId"] == other && d["format"] == "pdf" && d["sizeBytes"] == 2048.0 && d["version"] == 1.0
			}},
		{[]string{"trigger", "team.member.added", "--fixture", member},
			"", func(d map[string]any) bool {
				return d["teamId"] == "team_platform" && d["userId"] == "user_aaaaaaaaaaaaaaaaaaaaaaaa" && d["role"] == "admin" && len(d) == 3
			}},
		{[]string{"trigger", "context.created", "--fixture", partial, "--override", "version=1"},
			"", func(d map[string]any) bool {
				return d["contextId"] == id && d["name"] == "From the fixture" && fmt.Sprint(d["tags"]) == "[a b]" && d["version"] == 1.0
			}},
		{[]string{"trigger", "context.deleted", "--fixture", "-", "--override", `name=["not", "a list": text]`},
			`{"id":"evt_copied","type":"context.deleted","timestamp":"2026-01-01T00:00:00Z","data":{"contextId":"ctx_aaaaaaaaaaaaaaaaaaaaaaaa","name":"Gone","deletedBy":"user_bbbbbbbbbbbbbbbbbbbbbbbb"}}`,
			func(d map[string]any) bool {
				return d["contextId"] == "ctx_aaaaaaaaaaaaaaaaaaaaaaaa" && d["name"] == `["not", "a list": text]` && d["deletedBy"] == "user_bbbbbbbbbbbbbbbbbbbbbbbb"
			}},
		{[]string{"trigger", "context.created", "--override", `tags=["x","y"]`},
			"", func(d map[string]any) bool { return fmt.Sprint(d["tags"]) == "[x y]" }},
	} {
		r := c.runIn(tt.stdin, tt.args...)
		if r.code != exitOK || !strings.Contains(r.out, " (with your data)\n") {
			t.Errorf("%q: exit %d, %q, %q", tt.args, r.code, r.out, r.errOut)
			continue
		}
		evs := ts.Events()
		var d map[string]any
		if err := json.Unmarshal(evs[len(evs)-1].Data, &d); err != nil || !tt.check(d) {
			t.Errorf("%q: the event's data %s", tt.args, evs[len(evs)-1].Data)
		}
	}

	before := len(ts.Events())
	for _, tt := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"trigger", "context.updated", "--override", "bogus=1"}, exitUsage,
			"the context.updated data breaks the contract, so nothing was sent: --override bogus=1: the contract's context.updated data has no field bogus\n"},
		{[]string{"trigger", "context.updated", "--override", "changes.extra=1"}, exitUsage, "--override changes.extra=1: the contract's context.updated data has no field changes.extra"},
		{[]string{"trigger", "context.updated", "--override", "version=abc"}, exitUsage, "--override version=abc: version: value must be an integer"},
		{[]string{"trigger", "context.updated", "--override", "version=1"}, exitUsage, "--override version=1: version: number must be at least 2"},
		{[]string{"trigger", "context.updated", "--override", "contextId=42"}, exitUsage, "--override contextId=42: contextId: "},
		{[]string{"trigger", "team.member.added", "--override", "teamId=platform"}, exitUsage, "teamId: string doesn't match"},
		{[]string{"trigger", "context.created", "--fixture", unknown}, exitUsage, "--fixture " + unknown + ": the contract's context.created data has no field color"},
		{[]string{"trigger", "context.updated", "--override", "name"}, exitUsage, `--override "name": give PATH=VALUE`},
		{[]string{"trigger", "context.updated", "--override", "a..b=1"}, exitUsage, "is not field names and indexes separated by dots"},
		{[]string{"trigger", "context.updated", "--override", "changes.sections_modified.7=x"}, exitUsage, "7 is not an index of changes.sections_modified"},
		{[]string{"trigger", "context.updated", "--override", "name.first=x"}, exitUsage, "name holds text, which has no field first"},
		{[]string{"trigger", "context.created", "--fixture", filepath.Join(dir, "missing.json")}, exitUsage, "--fixture: open "},
		{[]string{"trigger", "context.created", "--fixture", notJSON}, exitUsage, "not a JSON object"},
		{[]string{"trigger", "context.created", "--fixture", "-"}, exitUsage, "not a JSON object"},
		{[]string{"trigger", "team.member.added", "--context", id}, exitUsage, "team.member.added is not about a context: --context does not go with it"},
		{[]string{"trigger", "context.updated", "--context", "ctx_missing"}, exitError, "404"},
	} {
		if r := c.run(tt.args...); r.code != tt.code || !strings.Contains(r.errOut, tt.err) {
			t.Errorf("%q: exit %d, %q; want %d and %q", tt.args, r.code, r.errOut, tt.code, tt.err)
		}
	}
	if n := len(ts.Events()) - before; n != 0 {
		t.Errorf("refused triggers fired %d events", n)
	}
	// A whole event of another type as the fixture.
	if r := c.runIn(`{"type":"context.created","data":{}}`, "trigger", "context.deleted", "--fixture", "-"); r.code != exitUsage || !strings.Contains(r.errOut, "is a whole event of type context.created, not context.deleted") {
		t.Errorf("another type's event as the fixture: exit %d, %q", r.code, r.errOut)
	}

	// A refusal sends nothing at all, not even to find the mock.
	rec := &authRecorder{serve: http.NotFound}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	quiet := &cli{t: t, env: map[string]string{"CONTEXTSVC_BASE_URL": srv.URL + "/v1", "CONTEXTSVC_API_KEY": testKey}}
	if r := quiet.run("trigger", "context.updated", "--override", "bogus=1"); r.code != exitUsage || len(rec.requests()) != 0 {
		t.Errorf("a refused trigger: exit %d, requests %q", r.code, rec.requests())
	}
}

// TestTriggerOwnDataOnDeployment: a deployment makes each event's data
// itself (exit 3), and --context exports that context for
// export.completed, creating nothing.
func TestTriggerOwnDataOnDeployment(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t, mockserver.WithAdmin(false))
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Mine", "-q"))
	before := len(ts.Events())
	for _, args := range [][]string{
		{"trigger", "context.updated", "--override", "name=x"},
		{"trigger", "context.created", "--fixture", "-"},
		{"trigger", "context.updated", "--context", id},
		{"trigger", "context.deleted", "--context", id},
	} {
		stdin := ""
		if slices.Contains(args, "-") {
			stdin = `{"name":"x"}`
		}
		if r := c.runIn(stdin, args...); r.code != exitUnsupported || strings.Count(r.errOut, "\n") != 1 {
			t.Errorf("%q on a deployment: exit %d, %q", args, r.code, r.errOut)
		}
	}
	if n := len(ts.Events()) - before; n != 0 || len(ts.Contexts("acme")) != 1 {
		t.Errorf("%d events, %d contexts", n, len(ts.Contexts("acme")))
	}
	if out := c.ok("trigger", "export.completed", "--context", id); out != "Triggered export.completed at "+ts.URL+": exported "+id+"\n" {
		t.Errorf("export.completed --context: %q", out)
	}
	evs := ts.Events()[before:]
	var d contextsvc.ExportCompletedData
	if len(evs) != 1 || evs[0].Type != contextsvc.EventExportCompleted || json.Unmarshal(evs[0].Data, &d) != nil || d.ContextID != id || len(ts.Contexts("acme")) != 1 {
		t.Errorf("events %+v", evs)
	}
}

// TestTriggerEmitRefused: when the mock refuses to fire the event, the
// command says so and exits 1 (it once lost that error and read the event
// it never got).
func TestTriggerEmitRefused(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/_mock/events" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":{"type":"api_error","message":"the event log is closed"}}`)
			return
		}
		ts.ServeHTTP(w, r)
	}))
	defer front.Close()
	c.env["CONTEXTSVC_BASE_URL"] = front.URL + "/v1"
	for _, args := range [][]string{{"trigger", "context.created"}, {"trigger", "context.updated", "--override", "name=Renamed"}} {
		r := c.run(args...)
		if r.code != exitError || !strings.Contains(r.errOut, "the event log is closed") {
			t.Errorf("%q: exit %d, stderr %q; want 1 and the mock's reason", args, r.code, r.errOut)
		}
	}
}
