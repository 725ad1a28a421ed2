package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/internal/mockrules"
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
		user := mockrules.AccountUser("acme")
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
		data.UpdatedBy != mockrules.AccountUser("second") {
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
