package mockserver_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
)

// docSource seeds the server the tests read contexts from: two
// accounts, a context of three versions with escapes and tags, one of a
// single version, and one in another account.
const docSource = `{"format":"contextsvc-mock-state","version":1,
"accounts":[{"id":"acme","contexts":[
{"id":"ctx_aaaaaaaaaaaaaaaaaaaaaaaa","versions":[
 {"version":1,"name":"Runbook \"main\"","content":"# Deploy\n\nship it","tags":["ops"],"createdAt":"2026-11-21T12:00:00.001Z","createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"},
 {"version":2,"name":"Runbook <v2>","content":"# Deploy\n\nship it today\n\n# Roll back\n\nundo","tags":["ops","db"],"createdAt":"2026-11-22T12:00:00.002Z","createdBy":"user_bbbbbbbbbbbbbbbbbbbbbbbb"},
 {"version":3,"name":"Runbook <v2>","content":"日本語 \u2028 😀","tags":[],"createdAt":"2026-11-23T12:00:00.003Z","createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"}]},
{"id":"ctx_cccccccccccccccccccccccc","versions":[
 {"version":1,"name":"Empty","createdAt":"2026-11-24T00:00:00.000Z","createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"}]}]},
{"id":"other","contexts":[
{"id":"ctx_dddddddddddddddddddddddd","versions":[
 {"version":1,"name":"Theirs","content":"x","createdAt":"2026-11-25T00:00:00.000Z","createdBy":"user_dddddddddddddddddddddddd"}]}]}]}`

// docServer is a server with a key in each of the accounts (acme and
// other by default), loaded with doc unless it is empty.
func docServer(t *testing.T, doc string, accounts ...string) *mockserver.Server {
	t.Helper()
	if len(accounts) == 0 {
		accounts = []string{"acme", "other"}
	}
	var opts []mockserver.Option
	for _, a := range accounts {
		opts = append(opts, mockserver.WithKey(mockserver.Key{Token: "sk_test_" + a, Account: a}))
	}
	s := mockserver.New(opts...)
	t.Cleanup(func() { _ = s.Close(t.Context()) })
	if doc != "" {
		if err := s.LoadState(strings.NewReader(doc)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestWriteStateDocumentRoundTrip writes the contexts of two accounts and
// loads them into another server: it serves the same contexts, ids,
// versions, content, tags, authors, times and changes; saved again, the
// document is the same bytes but for the time it was saved.
func TestWriteStateDocumentRoundTrip(t *testing.T) {
	t.Parallel()
	src := docServer(t, docSource)
	contexts := append(src.Contexts("acme"), src.Contexts("other")...)
	var doc bytes.Buffer
	if err := mockserver.WriteStateDocument(&doc, contexts); err != nil {
		t.Fatal(err)
	}
	dst := docServer(t, "")
	if err := dst.LoadState(bytes.NewReader(doc.Bytes())); err != nil {
		t.Fatalf("%v\n%s", err, doc.Bytes())
	}
	for _, account := range []string{"acme", "other"} {
		if diff := cmp.Diff(src.Contexts(account), dst.Contexts(account)); diff != "" {
			t.Errorf("account %s loaded (-written +loaded):\n%s", account, diff)
		}
	}

	var again bytes.Buffer
	if err := dst.SaveState(&again); err != nil {
		t.Fatal(err)
	}
	savedAt := regexp.MustCompile(`"savedAt":"[^"]*"`)
	if a, b := savedAt.ReplaceAllString(doc.String(), ""), savedAt.ReplaceAllString(again.String(), ""); a != b {
		t.Errorf("the loaded document saved again differs:\nwritten:\n%s\nsaved:\n%s", a, b)
	}
	if !strings.HasPrefix(doc.String(), `{"format":"contextsvc-mock-state","version":1,"savedAt":"`) ||
		!strings.Contains(doc.String(), `"webhooks":[`+"\n]") || !strings.HasSuffix(doc.String(), "\"deliveries\":[\n]}\n") {
		t.Errorf("the document:\n%s", doc.Bytes())
	}
}

// TestWriteStateDocumentAccounts groups contexts by account in the order
// of their first context, an empty account being the default one, and
// numbers each account's contexts in the order given.
func TestWriteStateDocumentAccounts(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ctx := func(account, id, name string) mockserver.StoredContext {
		return mockserver.StoredContext{Account: account, ID: id, Versions: []mockserver.StoredVersion{
			{Version: 1, Name: name, Content: "# " + name, CreatedAt: at, CreatedBy: mockrules.AccountUser(account),
				Changes: contextsvc.Changes{SectionsModified: []string{name}, WordCountDelta: 1}}}}
	}
	var doc bytes.Buffer
	err := mockserver.WriteStateDocument(&doc, []mockserver.StoredContext{
		ctx("", "ctx_d1d1d1d1d1d1d1d1d1d1d1d1", "D1"),
		ctx("other", "ctx_o1o1o1o1o1o1o1o1o1o1o1o1", "O1"),
		ctx(mockserver.DefaultAccount, "ctx_d2d2d2d2d2d2d2d2d2d2d2d2", "D2"),
	})
	if err != nil {
		t.Fatal(err)
	}
	text := doc.String()
	if i, j := strings.Index(text, `{"id":"default","contextSeq":2,`), strings.Index(text, `{"id":"other","contextSeq":1,`); i < 0 || j < i {
		t.Errorf("accounts not default then other:\n%s", text)
	}
	if !strings.Contains(text, `{"id":"ctx_d2d2d2d2d2d2d2d2d2d2d2d2","seq":2,`) {
		t.Errorf("the second context of the default account is not seq 2:\n%s", text)
	}
	s := docServer(t, text, mockserver.DefaultAccount, "other")
	var names []string
	for _, c := range s.Contexts(mockserver.DefaultAccount) {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "D1,D2" || len(s.Contexts("other")) != 1 {
		t.Errorf("default account %q, other %d", names, len(s.Contexts("other")))
	}
}

// TestWriteStateDocumentRefused: what breaks a rule is written as given,
// and the load refuses it, saying where, changing nothing.
func TestWriteStateDocumentRefused(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		context mockserver.StoredContext
		where   string
	}{
		{"a version missing", mockserver.StoredContext{ID: "ctx_aaaaaaaaaaaaaaaaaaaaaaaa", Versions: []mockserver.StoredVersion{
			{Version: 2, Name: "x", CreatedAt: at, CreatedBy: "user_aaaaaaaaaaaaaaaaaaaaaaaa"}}}, "accounts[0].contexts[0].versions[0].version"},
		{"no versions", mockserver.StoredContext{ID: "ctx_aaaaaaaaaaaaaaaaaaaaaaaa"}, "accounts[0].contexts[0].versions"},
		{"an id of another form", mockserver.StoredContext{ID: "ctx_UPPER", Versions: []mockserver.StoredVersion{
			{Version: 1, Name: "x", CreatedAt: at, CreatedBy: "user_aaaaaaaaaaaaaaaaaaaaaaaa"}}}, "accounts[0].contexts[0].id"},
		{"an author of another form", mockserver.StoredContext{ID: "ctx_aaaaaaaaaaaaaaaaaaaaaaaa", Versions: []mockserver.StoredVersion{
			{Version: 1, Name: "x", CreatedAt: at, CreatedBy: "alice@example.com"}}}, "accounts[0].contexts[0].versions[0].createdBy"},
		{"an unknown account", mockserver.StoredContext{Account: "nobody", ID: "ctx_aaaaaaaaaaaaaaaaaaaaaaaa", Versions: []mockserver.StoredVersion{
			{Version: 1, Name: "x", CreatedAt: at, CreatedBy: "user_aaaaaaaaaaaaaaaaaaaaaaaa"}}}, "accounts[0].id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var doc bytes.Buffer
			if err := mockserver.WriteStateDocument(&doc, []mockserver.StoredContext{tt.context}); err != nil {
				t.Fatal(err)
			}
			s := docServer(t, docSource)
			err := s.LoadState(&doc)
			var se *mockserver.StateError
			if !errors.As(err, &se) || se.Path != tt.where {
				t.Fatalf("LoadState: %v; want a *StateError at %s", err, tt.where)
			}
			if n := len(s.Contexts("acme")); n != 2 {
				t.Errorf("the refused load changed the server: %d contexts", n)
			}
		})
	}
}

// TestWriteStateDocumentWriteError returns the writer's error.
func TestWriteStateDocumentWriteError(t *testing.T) {
	t.Parallel()
	src := docServer(t, docSource)
	want := errors.New("disk full")
	if err := mockserver.WriteStateDocument(docFailingWriter{want}, src.Contexts("acme")); !errors.Is(err, want) {
		t.Errorf("err = %v, want %v", err, want)
	}
}

type docFailingWriter struct{ err error }

func (w docFailingWriter) Write([]byte) (int, error) { return 0, w.err }
