package rules

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// TestRules: each rule takes what the contract allows at its bounds and
// refuses one past them, naming the field, without repeating a secret.
func TestRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		check func() *httpapi.Error
		param string // "" when the value is accepted
	}{
		{"name of 200", func() *httpapi.Error { return Name(strings.Repeat("é", MaxNameRunes)) }, ""},
		{"name of 201", func() *httpapi.Error { return Name(strings.Repeat("é", MaxNameRunes+1)) }, "name"},
		{"empty name", func() *httpapi.Error { return Name("") }, "name"},
		{"blank name", func() *httpapi.Error { return Name(" \t\u00a0") }, "name"},
		{"content at the limit", func() *httpapi.Error { return Content(strings.Repeat("x", MaxContentLen)) }, ""},
		{"content past it", func() *httpapi.Error { return Content(strings.Repeat("x", MaxContentLen+1)) }, "content"},
		{"secret of 256", func() *httpapi.Error { return WebhookSecret(strings.Repeat("s", MaxSecretRunes)) }, ""},
		{"secret of 257", func() *httpapi.Error { return WebhookSecret(strings.Repeat("s", MaxSecretRunes+1)) }, "secret"},
		{"secret with a control", func() *httpapi.Error { return WebhookSecret("whsec\x00") }, "secret"},
		{"secret not UTF-8", func() *httpapi.Error { return WebhookSecret("whsec\xff") }, "secret"},
		{"https url", func() *httpapi.Error { return WebhookURL("https://hooks.example.com/in?a=%20", false) }, ""},
		{"http to loopback", func() *httpapi.Error { return WebhookURL("http://127.0.0.1:8080/in", false) }, ""},
		{"http elsewhere", func() *httpapi.Error { return WebhookURL("http://hooks.example.com/in", false) }, "url"},
		{"http, https only", func() *httpapi.Error { return WebhookURL("http://localhost/in", true) }, "url"},
		{"broken escape", func() *httpapi.Error { return WebhookURL("https://hooks.example.com/%zz", false) }, "url"},
		{"url too long", func() *httpapi.Error { return WebhookURL("https://h.example/"+strings.Repeat("a", MaxURLLen), false) }, "url"},
		{"no events", func() *httpapi.Error { _, e := WebhookEvents(nil); return e }, "events"},
		{"unknown event", func() *httpapi.Error { _, e := WebhookEvents([]contextsvc.EventType{"context.eaten"}); return e }, "events"},
	} {
		e := tc.check()
		switch {
		case tc.param == "" && e != nil:
			t.Errorf("%s: %v, want it accepted", tc.name, e)
		case tc.param != "" && e == nil:
			t.Errorf("%s: accepted, want a 400 about %s", tc.name, tc.param)
		case tc.param != "" && (e.Param != tc.param || e.Status != 400):
			t.Errorf("%s: %d about %q, want a 400 about %q", tc.name, e.Status, e.Param, tc.param)
		case e != nil && strings.Contains(e.Message, "whsec"):
			t.Errorf("%s: the message repeats the secret: %v", tc.name, e)
		}
	}
}

// TestTagsAndEvents: duplicates are dropped, first kept, before the
// limits count.
func TestTagsAndEvents(t *testing.T) {
	t.Parallel()
	tags := make([]string, 0, 2*MaxTags)
	for i := range MaxTags {
		tags = append(tags, string(rune('a'+i)), string(rune('a'+i)))
	}
	got, e := Tags(tags)
	if e != nil || len(got) != MaxTags || got[0] != "a" || got[1] != "b" {
		t.Errorf("20 tags, each twice: %v %v", got, e)
	}
	if _, e := Tags(append(tags, "u")); e == nil || e.Param != "tags" {
		t.Errorf("21 distinct tags: %v", e)
	}
	if _, e := Tags([]string{strings.Repeat("t", MaxTagRunes+1)}); e == nil || e.Param != "tags" {
		t.Errorf("a tag of 51: %v", e)
	}
	evs, e := WebhookEvents([]contextsvc.EventType{contextsvc.EventContextCreated, contextsvc.EventContextDeleted, contextsvc.EventContextCreated})
	if e != nil || !slices.Equal(evs, []contextsvc.EventType{contextsvc.EventContextCreated, contextsvc.EventContextDeleted}) {
		t.Errorf("events with a duplicate: %v %v", evs, e)
	}
}

// TestAccountAndEventType: the grammars of an account and of an emitted
// event's type.
func TestAccountAndEventType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		account string
		ok      bool
	}{{"acme", true}, {"a.b-c_D9", true}, {strings.Repeat("a", MaxAccountLen), true}, {"", false},
		{strings.Repeat("a", MaxAccountLen+1), false}, {"ac me", false}, {"é", false}} {
		if err := Account(tc.account); (err == nil) != tc.ok {
			t.Errorf("Account(%q): %v, want ok %t", tc.account, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		typ string
		ok  bool
	}{{"team.member.added", true}, {"x", true}, {strings.Repeat("x", MaxEventTypeLen), true}, {"", false},
		{strings.Repeat("x", MaxEventTypeLen+1), false}, {"a b", false}, {"a\nb", false}, {"é", false}} {
		if err := EventType(tc.typ); (err == nil) != tc.ok {
			t.Errorf("EventType(%q): %v, want ok %t", tc.typ, err, tc.ok)
		}
	}
}

// TestDecodeWebhookFields: a body's fields are read as strings (a list
// of strings for events), then held to their rule.
func TestDecodeWebhookFields(t *testing.T) {
	t.Parallel()
	if u, e := DecodeWebhookURL(json.RawMessage(`"https://hooks.example.com/in"`), true); e != nil || u != "https://hooks.example.com/in" {
		t.Errorf("url: %q %v", u, e)
	}
	if _, e := DecodeWebhookURL(json.RawMessage(`42`), false); e == nil || e.Param != "url" {
		t.Errorf("a url that is no string: %v", e)
	}
	if evs, e := DecodeWebhookEvents(json.RawMessage(`["context.created"]`)); e != nil || len(evs) != 1 {
		t.Errorf("events: %v %v", evs, e)
	}
	if _, e := DecodeWebhookEvents(json.RawMessage(`"context.created"`)); e == nil || e.Param != "events" {
		t.Errorf("events that are no list: %v", e)
	}
	if s, e := DecodeWebhookSecret(json.RawMessage(`"k"`)); e != nil || s != "k" {
		t.Errorf("secret: %q %v", s, e)
	}
	if e := WebhookNotFound(`wh_"x`); e.Status != 404 || !strings.Contains(e.Message, `"wh_\"x"`) {
		t.Errorf("not found: %+v", e)
	}
}
