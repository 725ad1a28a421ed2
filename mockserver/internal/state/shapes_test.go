package state

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/shapetest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// The state document keeps the contract's objects in their wire shapes,
// with what only the document needs added (a webhook's seq and secret, a
// delivery's seq and retries) and what it does not need left out (a
// version's contextId: the context holding it says). These tests hold the
// writer and the reader to the one definition of each (model's, the
// SDK's, the public types' tags), so a field added or renamed there fails
// here until both follow.

// The shapes the document takes from a definition, with its edits.
var (
	docVersion = shapetest.Fields[model.VersionRecordJSON]()
	docChanges = shapetest.Fields[contextsvc.Changes]()
	docWebhook = shapetest.Insert(shapetest.Insert(shapetest.Fields[model.WebhookJSON](),
		"id", shapetest.Field{Name: "seq", Type: "uint64"}),
		"events", shapetest.Field{Name: "secret", Type: "string"})
	docEvent   = shapetest.Fields[model.EventJSON]()
	docAttempt = shapetest.Fields[model.DeliveryAttempt]()
	docChaos   = shapetest.Fields[model.ChaosEffect]()
	// docDeliveryOwn are a document's delivery's fields that the admin
	// API's Delivery does not have; the others are Delivery's.
	docDeliveryOwn = []string{"seq", "retries"}
)

// TestReaderFieldsAreTheDefinitions: the reader takes the fields of each
// object the definitions give it, under their names, and no other (its
// fields keep their checking types).
func TestReaderFieldsAreTheDefinitions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		got, want []shapetest.Field
	}{
		{"version", shapetest.Fields[versionDoc](), docVersion},
		{"changes", shapetest.Fields[changesDoc](), docChanges},
		{"webhook", shapetest.Fields[webhookDoc](), docWebhook},
		{"event", shapetest.Fields[eventDoc](), docEvent},
		{"attempt", shapetest.Fields[attemptDoc](), docAttempt},
		{"chaos", shapetest.Fields[chaosDoc](), docChaos},
	} {
		if diff := cmp.Diff(shapetest.Names(tc.want), shapetest.Names(tc.got)); diff != "" {
			t.Errorf("%s (-definition +reader):\n%s", tc.name, diff)
		}
	}
	delivery := shapetest.Names(shapetest.Fields[model.Delivery]())
	for _, name := range shapetest.Names(shapetest.Fields[deliveryDoc]()) {
		if !slices.Contains(delivery, name) && !slices.Contains(docDeliveryOwn, name) {
			t.Errorf("the reader's delivery takes %q, which a Delivery does not have", name)
		}
	}
}

// TestWriterShapes writes a document whose strings need every escape and
// compares each object with what encoding/json writes of its definition,
// byte for byte (a version's, a webhook's and an attempt's members all;
// a delivery's those it shares with Delivery), and each object's members
// with the reader's fields, in order.
func TestWriterShapes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.FixedZone("x", 3600))
	odd := "<b>&amp;</b> \"q\" \\ \t\r\n \u2028\u2029 é 日本 😀 \x01\x7f"
	versions := []*store.Version{
		{Version: 1, Name: "One " + odd, Content: "# Start\n\n" + odd, Tags: []string{"ops", "<x>", odd}, CreatedAt: at, CreatedBy: "user_1",
			Changes: contextsvc.Changes{SectionsModified: []string{"Start", "<h1>" + odd}, WordCountDelta: 5}},
		{Version: 2, Name: "Two", Content: "", Tags: nil, CreatedAt: at.Add(time.Hour), CreatedBy: "user_2",
			Changes: contextsvc.Changes{WordCountDelta: -5}},
	}
	hook := store.SavedWebhook{ID: "wh_1", Seq: 3, CreatedAt: at,
		State: store.WebhookState{URL: "https://example.com/in?a=<b>&c=\"d\"", Events: []contextsvc.EventType{contextsvc.EventContextCreated, "x.<y>"},
			Secret: "whsec_" + odd, Active: true}}
	attempts := []delivery.Attempt{
		{Number: 1, ScheduledAt: at, StartedAt: at.Add(time.Millisecond), Duration: 1500 * time.Millisecond, StatusCode: 503,
			Error: "receiver answered 503 " + odd, ResponseSnippet: "<html>" + odd + "</html>", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
			Chaos: model.ChaosEffect{Action: model.ChaosHeld, Delay: 2 * time.Second}},
		{Number: 2, ScheduledAt: at.Add(time.Minute), StartedAt: at.Add(time.Minute), Error: "dial tcp: refused"},
	}
	envelope, err := json.Marshal(model.EventJSON{ID: "evt_1", Type: contextsvc.EventContextCreated, Timestamp: jsonwire.FormatTime(at),
		Data: json.RawMessage(`{"contextId":"ctx_1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	dl := delivery.Saved{ID: "dlv_1", Seq: 4, Event: &delivery.Body{ID: "evt_1", Type: contextsvc.EventContextCreated, Bytes: envelope},
		WebhookID: hook.ID, URL: hook.State.URL, CreatedAt: at, Attempts: attempts, DueAt: at.Add(2 * time.Minute), Retries: 2}
	snap := &Snapshot{SavedAt: at, EventSeq: 1, DeliverySeq: 4,
		Store: store.Saved{WebhookSeq: 3, Accounts: []store.SavedAccount{{ID: "team-a", ContextSeq: 2,
			Contexts: []store.SavedContext{{ID: "ctx_1", Seq: 2, Versions: versions}}, Webhooks: []store.SavedWebhook{hook}}}},
		Deliveries: []delivery.Saved{dl}}
	var buf bytes.Buffer
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Accounts []struct {
			Contexts []json.RawMessage `json:"contexts"`
			Webhooks []json.RawMessage `json:"webhooks"`
		} `json:"accounts"`
		Events     []json.RawMessage `json:"events"`
		Deliveries []json.RawMessage `json:"deliveries"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Accounts) != 1 || len(doc.Accounts[0].Contexts) != 1 || len(doc.Accounts[0].Webhooks) != 1 ||
		len(doc.Events) != 1 || len(doc.Deliveries) != 1 {
		t.Fatalf("not the one account, context, webhook, event and delivery written:\n%s", buf.Bytes())
	}
	marshal := func(v any) string {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	names := func(ms []shapetest.Member) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = m.Name
		}
		return out
	}
	// The reader's names for what it takes, in the writer's order.
	readerNames := func(name string, ms []shapetest.Member, reader []shapetest.Field) {
		t.Helper()
		if diff := cmp.Diff(shapetest.Names(reader), names(ms)); diff != "" {
			t.Errorf("%s: the writer's members are not the reader's fields (-reader +writer):\n%s", name, diff)
		}
	}

	// A context: its versions, each a version record.
	ctx := shapetest.Members(t, doc.Accounts[0].Contexts[0])
	readerNames("context", ctx, shapetest.Fields[contextDoc]())
	wantVersions := make([]model.VersionRecordJSON, len(versions))
	for i, v := range versions {
		tags, sections := v.Tags, v.Changes.SectionsModified
		if tags == nil {
			tags = []string{}
		}
		if sections == nil {
			sections = []string{}
		}
		wantVersions[i] = model.VersionRecordJSON{Version: v.Version, Name: v.Name, Content: v.Content, Tags: tags,
			CreatedAt: jsonwire.FormatTime(v.CreatedAt), CreatedBy: v.CreatedBy,
			Changes: contextsvc.Changes{SectionsModified: sections, WordCountDelta: v.Changes.WordCountDelta}}
	}
	written := member(ctx, "versions")
	if want := marshal(wantVersions); written != want {
		t.Errorf("versions:\n%s\nencoding/json of the definition:\n%s", written, want)
	}
	var vs []json.RawMessage
	if err := json.Unmarshal([]byte(written), &vs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		vm := shapetest.Members(t, v)
		readerNames("version", vm, shapetest.Fields[versionDoc]())
		readerNames("changes", shapetest.Members(t, []byte(member(vm, "changes"))), shapetest.Fields[changesDoc]())
	}

	// A webhook: the Webhook with its seq and secret.
	wh := shapetest.Members(t, doc.Accounts[0].Webhooks[0])
	readerNames("webhook", wh, shapetest.Fields[webhookDoc]())
	var shown []shapetest.Member
	for _, m := range wh {
		switch m.Name {
		case "seq":
			if m.Value != "3" {
				t.Errorf("webhook seq %s, want 3", m.Value)
			}
		case "secret":
			if want := marshal(hook.State.Secret); m.Value != want {
				t.Errorf("webhook secret %s, want %s", m.Value, want)
			}
		default:
			shown = append(shown, m)
		}
	}
	wantHook := marshal(model.WebhookJSON{ID: hook.ID, URL: hook.State.URL, Events: hook.State.Events, CreatedAt: jsonwire.FormatTime(at),
		Active: true})
	if got := string(shapetest.Object(shown)); got != wantHook {
		t.Errorf("webhook without seq and secret:\n%s\nencoding/json of the definition:\n%s", got, wantHook)
	}

	// An event: the envelope its attempts sign, as it is.
	if !bytes.Equal(doc.Events[0], envelope) {
		t.Errorf("event %s, want %s", doc.Events[0], envelope)
	}
	readerNames("event", shapetest.Members(t, doc.Events[0]), shapetest.Fields[eventDoc]())

	// A delivery: the members it shares with a Delivery written as the
	// admin API writes them, its attempts whole.
	dm := shapetest.Members(t, doc.Deliveries[0])
	readerNames("delivery", dm, shapetest.Fields[deliveryDoc]())
	admin := shapetest.Members(t, []byte(marshal(model.Delivery{ID: dl.ID, EventID: dl.Event.ID, WebhookID: dl.WebhookID, URL: dl.URL,
		CreatedAt: dl.CreatedAt, NextAttemptAt: dl.DueAt, Attempts: attempts})))
	for _, m := range dm {
		if slices.Contains(docDeliveryOwn, m.Name) {
			continue
		}
		i := slices.IndexFunc(admin, func(a shapetest.Member) bool { return a.Name == m.Name })
		if i < 0 {
			t.Errorf("delivery member %q: a Delivery has none", m.Name)
		} else if m.Value != admin[i].Value {
			t.Errorf("delivery member %q:\n%s\nencoding/json of the Delivery's:\n%s", m.Name, m.Value, admin[i].Value)
		}
	}
	var as []json.RawMessage
	if err := json.Unmarshal([]byte(member(dm, "attempts")), &as); err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		am := shapetest.Members(t, a)
		// The writer leaves out what is empty, as the admin API does; the
		// order is the reader's.
		reader := shapetest.Fields[attemptDoc]()
		reader = slices.DeleteFunc(reader, func(f shapetest.Field) bool {
			return !slices.ContainsFunc(am, func(m shapetest.Member) bool { return m.Name == f.Name })
		})
		readerNames("attempt", am, reader)
		if chaos := member(am, "chaos"); chaos != "" {
			readerNames("chaos", shapetest.Members(t, []byte(chaos)), shapetest.Fields[chaosDoc]())
		}
	}
}

// member returns the value of the member named, "" when there is none.
func member(ms []shapetest.Member, name string) string {
	if i := slices.IndexFunc(ms, func(m shapetest.Member) bool { return m.Name == name }); i >= 0 {
		return ms[i].Value
	}
	return ""
}
