package mockserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/linediff"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// This file is the part of the admin API that the dashboard reads besides
// the events, deliveries, webhooks and faults: the accounts and their keys
// (tokens masked), every account's contexts with their versions and the
// diff of two versions, one event, and a summary of what the server holds.

func (s *Server) browseRoutes() {
	admin := s.handleAdmin
	admin("/_mock/accounts", route{http.MethodGet: s.adminListAccounts})
	admin("/_mock/contexts", route{http.MethodGet: s.adminListContexts})
	admin("/_mock/contexts/{id}", route{http.MethodGet: s.adminGetContext})
	admin("/_mock/contexts/{id}/versions", route{http.MethodGet: s.adminListContextVersions})
	admin("/_mock/contexts/{id}/diff", route{http.MethodGet: s.adminDiffContext})
	admin("/_mock/events/{id}", route{http.MethodGet: s.adminGetEvent})
	admin("/_mock/summary", route{http.MethodGet: s.adminSummary})
}

// MaskToken returns an API key's token as the dashboard and the admin API
// show it: its first characters and its last, never the whole of it. A
// token of 16 characters or more shows its first 7 and last 4 ("sk_test…
// 3f9a"); a shorter one shows at most a third of its start and a quarter
// of its end, and one of fewer than 3 characters shows nothing but "…".
func MaskToken(token string) string {
	runes := []rune(token)
	n := len(runes)
	head, tail := min(7, n/3), min(4, n/4)
	return string(runes[:head]) + "…" + string(runes[n-tail:])
}

// accountJSON is an account as GET /_mock/accounts shows it.
type accountJSON struct {
	ID       string    `json:"id"`
	Users    []string  `json:"users"`
	Keys     []keyJSON `json:"keys"`
	Contexts int       `json:"contexts"`
	Webhooks int       `json:"webhooks"`
}

// keyJSON is a key of an account, its token masked.
type keyJSON struct {
	Token     string `json:"token"`
	User      string `json:"user"`
	Plan      Plan   `json:"plan"`
	Scope     Scope  `json:"scope"`
	PerMinute int    `json:"perMinute,omitempty"`
	Burst     int    `json:"burst,omitempty"`
}

// MarshalJSON is the default encoding; it lets writePage encode accounts.
func (a accountJSON) MarshalJSON() ([]byte, error) {
	type plain accountJSON
	return json.Marshal(plain(a))
}

// adminListAccounts pages through the server's accounts in the order of
// their first key, with their keys (tokens masked) and how many contexts
// and webhooks each holds.
func (s *Server) adminListAccounts(w http.ResponseWriter, r *http.Request) {
	limit, after, e := s.cursors.PageParams(r.URL.Query(), httpapi.CursorAccounts, "")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	// Positions count accounts from 1.
	accounts := s.store.Accounts()
	start := int(min(after, uint64(len(accounts))))
	end := min(start+limit, len(accounts))
	items := make([]accountJSON, 0, end-start)
	for _, a := range accounts[start:end] {
		aj := accountJSON{ID: a.ID(), Users: []string{}, Keys: []keyJSON{}}
		for _, k := range s.keys {
			if k.acct != a {
				continue
			}
			if !slices.Contains(aj.Users, k.User) {
				aj.Users = append(aj.Users, k.User)
			}
			kj := keyJSON{Token: MaskToken(k.Token), User: k.User, Plan: k.Plan, Scope: k.Scope}
			if k.Plan == PlanEnterprise {
				kj.PerMinute, kj.Burst = k.PerMinute, k.Burst
			}
			aj.Keys = append(aj.Keys, kj)
		}
		aj.Contexts, aj.Webhooks = a.Counts()
		items = append(items, aj)
	}
	var next uint64
	if end < len(accounts) {
		next = uint64(end)
	}
	httpapi.WritePage(w, s.cursors, httpapi.CursorAccounts, "", items, next)
}

// adminContextJSON is a context as the admin lists show it: its account,
// and its content's size instead of the content.
type adminContextJSON struct {
	ID        string   `json:"id"`
	Account   string   `json:"account"`
	Name      string   `json:"name"`
	Tags      []string `json:"tags"`
	Version   int      `json:"version"`
	SizeBytes int      `json:"sizeBytes"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
	// Content is set only on GET /_mock/contexts/{id}.
	Content *string `json:"content,omitempty"`
}

// MarshalJSON is the default encoding; it lets writePage encode contexts.
func (c adminContextJSON) MarshalJSON() ([]byte, error) {
	type plain adminContextJSON
	return json.Marshal(plain(c))
}

func adminContext(c store.Summary) adminContextJSON {
	return adminContextJSON{ID: c.ID, Account: c.Account, Name: c.Name, Tags: c.Tags, Version: c.Version,
		SizeBytes: c.SizeBytes, CreatedAt: jsonwire.FormatTime(c.CreatedAt), UpdatedAt: jsonwire.FormatTime(c.UpdatedAt)}
}

// adminListContexts pages through every account's contexts (or one
// account's), by account in the order of their first key, then in
// creation order; newest first with order=desc. Each page is a binary
// search per account it visits and its items, at any depth. The content
// is left out (sizeBytes says how long it is): GET /_mock/contexts/{id}
// has it.
func (s *Server) adminListContexts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account, e := accountFilter(q)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	scope := httpapi.ListScope(account)
	limit, start, scope, e := s.cursors.ListParams(q, httpapi.CursorAdminContexts, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	sums, next := s.store.ContextsPage(account, start, limit)
	items := make([]adminContextJSON, len(sums))
	for i, c := range sums {
		items[i] = adminContext(c)
	}
	httpapi.WritePage(w, s.cursors, httpapi.CursorAdminContexts, scope, items, next)
}

func (s *Server) adminGetContext(w http.ResponseWriter, r *http.Request) {
	c, ok := s.store.Find(r.PathValue("id"))
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("no context with id "+strconv.Quote(r.PathValue("id"))))
		return
	}
	cj := adminContext(c)
	cj.Content = &c.Content
	// The page shows the content: 1 MB of '<' answers 1 MB, not 6. (The
	// plain type has no MarshalJSON, whose json.Marshal would escape.)
	type plain adminContextJSON
	writeText(w, plain(cj))
}

// adminVersionJSON is a version as the admin list shows it: its content's
// size instead of the content (GET /v1/contexts/{id}/versions has it, and
// the diff compares it).
type adminVersionJSON struct {
	ContextID string             `json:"contextId"`
	Version   int                `json:"version"`
	Name      string             `json:"name"`
	Tags      []string           `json:"tags"`
	SizeBytes int                `json:"sizeBytes"`
	CreatedAt string             `json:"createdAt"`
	CreatedBy string             `json:"createdBy"`
	Changes   contextsvc.Changes `json:"changes"`
}

// MarshalJSON is the default encoding; it lets writePage encode versions.
func (v adminVersionJSON) MarshalJSON() ([]byte, error) {
	type plain adminVersionJSON
	if v.Changes.SectionsModified == nil {
		v.Changes.SectionsModified = []string{}
	}
	return json.Marshal(plain(v))
}

// adminListContextVersions pages through the versions of any account's
// context, without their content; newest first with order=desc.
func (s *Server) adminListContextVersions(w http.ResponseWriter, r *http.Request) {
	scope := httpapi.ListScope(r.PathValue("id"))
	limit, start, scope, e := s.cursors.ListParams(r.URL.Query(), httpapi.CursorContextVersions, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	id := r.PathValue("id")
	var items []adminVersionJSON
	next, ok := s.store.VersionsPage(id, start, limit, func(v *store.Version) {
		items = append(items, adminVersionJSON{ContextID: id, Version: v.Version, Name: v.Name, Tags: v.Tags,
			SizeBytes: len(v.Content), CreatedAt: jsonwire.FormatTime(v.CreatedAt), CreatedBy: v.CreatedBy, Changes: v.Changes})
	})
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("no context with id "+strconv.Quote(id)))
		return
	}
	if items == nil {
		items = []adminVersionJSON{}
	}
	httpapi.WritePage(w, s.cursors, httpapi.CursorContextVersions, scope, items, next)
}

// diffJSON is the answer of GET /_mock/contexts/{id}/diff.
type diffJSON struct {
	ContextID    string         `json:"contextId"`
	From         int            `json:"from"`
	To           int            `json:"to"`
	FromName     string         `json:"fromName"`
	ToName       string         `json:"toName"`
	FromTags     []string       `json:"fromTags"`
	ToTags       []string       `json:"toTags"`
	Identical    bool           `json:"identical"`
	TooDifferent bool           `json:"tooDifferent"`
	Added        int            `json:"added"`
	Removed      int            `json:"removed"`
	Hunks        []diffHunkJSON `json:"hunks"`
	// HunksLeftOut counts the hunks past maxDiffTextBytes, not sent.
	HunksLeftOut int `json:"hunksLeftOut,omitempty"`
	// FromContent and ToContent are both texts, when they are too
	// different to diff, each cut to maxDiffContentBytes;
	// FromContentCut and ToContentCut count the bytes left out.
	FromContent    *string `json:"fromContent,omitempty"`
	ToContent      *string `json:"toContent,omitempty"`
	FromContentCut int     `json:"fromContentCut,omitempty"`
	ToContentCut   int     `json:"toContentCut,omitempty"`
}

// The bounds of a diff's answer, so that two versions of 1,000,000 bytes
// answer at most about 1 MB of JSON (the page shows it all), not both
// texts whole (and each '<' escaped six bytes long: 12 MB).
const (
	// maxDiffLineBytes cuts a longer line of a hunk; the line's cut
	// counts the bytes left out.
	maxDiffLineBytes = 2 << 10
	// maxDiffTextBytes bounds the text of the hunks sent, all lines
	// together; the lines and hunks past it are left out and counted.
	maxDiffTextBytes = 256 << 10
	// maxDiffContentBytes cuts each text sent when the versions are too
	// different to diff.
	maxDiffContentBytes = 128 << 10
)

type diffHunkJSON struct {
	FromStart int            `json:"fromStart"`
	FromLines int            `json:"fromLines"`
	ToStart   int            `json:"toStart"`
	ToLines   int            `json:"toLines"`
	Lines     []diffLineJSON `json:"lines"`
	// LinesLeftOut counts the lines of the hunk past maxDiffTextBytes,
	// not sent (the last hunk sent may end early).
	LinesLeftOut int `json:"linesLeftOut,omitempty"`
}

type diffLineJSON struct {
	Op        string `json:"op"`
	Text      string `json:"text"`
	NoNewline bool   `json:"noNewline,omitempty"`
	// Cut counts the bytes of the line past maxDiffLineBytes, not sent.
	Cut int `json:"cut,omitempty"`
}

var diffOpNames = map[linediff.Op]string{linediff.Equal: "equal", linediff.Delete: "delete", linediff.Insert: "insert"}

// versionParam reads the optional version query parameter name: absent
// is 0.
func versionParam(r *http.Request, name string) (int, *httpapi.Error) {
	vs, ok := r.URL.Query()[name]
	if !ok {
		return 0, nil
	}
	n, valid := httpapi.ParseVersion(vs[0])
	if len(vs) > 1 || !valid {
		return 0, httpapi.BadRequest(name, name+" must be one version number (1 or more)")
	}
	return n, nil
}

// adminDiffContext diffs the content of two versions of any account's
// context, line by line (linediff.go): to defaults to the latest version,
// from to the one before to. Two versions too different to diff within
// the diff's bounds are answered with both texts. The answer is bounded
// too (maxDiffLineBytes, maxDiffTextBytes, maxDiffContentBytes).
func (s *Server) adminDiffContext(w http.ResponseWriter, r *http.Request) {
	from, e := versionParam(r, "from")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	to, e := versionParam(r, "to")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	id := r.PathValue("id")
	fv, tv, from, to, n, ok, found := s.store.TwoVersions(id, from, to)
	switch {
	case !found:
		httpapi.WriteError(w, httpapi.NotFound("no context with id "+strconv.Quote(id)))
		return
	case !ok:
		httpapi.WriteError(w, httpapi.NotFound("context "+strconv.Quote(id)+" has versions 1 to "+strconv.Itoa(n)))
		return
	}
	// Versions never change once recorded: the diff runs unlocked.

	d := linediff.Texts(fv.Content, tv.Content)
	out := diffJSON{ContextID: id, From: from, To: to, FromName: fv.Name, ToName: tv.Name, FromTags: fv.Tags, ToTags: tv.Tags,
		Identical: d.Identical, TooDifferent: d.TooDifferent, Added: d.Added, Removed: d.Removed, Hunks: []diffHunkJSON{}}
	sent := 0 // bytes of text in the hunks so far
	for n, h := range d.Hunks {
		if sent >= maxDiffTextBytes {
			out.HunksLeftOut = len(d.Hunks) - n
			break
		}
		hj := diffHunkJSON{FromStart: h.FromStart, FromLines: h.FromLines, ToStart: h.ToStart, ToLines: h.ToLines,
			Lines: make([]diffLineJSON, 0, len(h.Lines))}
		for i, l := range h.Lines {
			if sent >= maxDiffTextBytes {
				// One hunk may hold 1,000 changed lines: it ends here.
				hj.LinesLeftOut = len(h.Lines) - i
				break
			}
			text := jsonwire.CutUTF8(l.Text, maxDiffLineBytes)
			sent += len(text)
			hj.Lines = append(hj.Lines, diffLineJSON{Op: diffOpNames[l.Op], Text: text, NoNewline: l.NoNewline, Cut: len(l.Text) - len(text)})
		}
		out.Hunks = append(out.Hunks, hj)
	}
	if d.TooDifferent {
		from, to := jsonwire.CutUTF8(fv.Content, maxDiffContentBytes), jsonwire.CutUTF8(tv.Content, maxDiffContentBytes)
		out.FromContent, out.ToContent = &from, &to
		out.FromContentCut, out.ToContentCut = len(fv.Content)-len(from), len(tv.Content)-len(to)
	}
	if out.FromTags == nil {
		out.FromTags = []string{}
	}
	if out.ToTags == nil {
		out.ToTags = []string{}
	}
	writeText(w, out)
}

// writeText writes v as a 200 JSON answer without HTML's escapes: a '<'
// of a content is one byte, not six ("\u003c"), so an answer carrying
// texts (a context's content, a diff) is about as long as they are, not up
// to six times (a JSON reader takes either).
func writeText(w http.ResponseWriter, v any) {
	b, err := jsonwire.MarshalText(v)
	if err != nil {
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: "encoding the response: " + err.Error()})
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, b)
}

func (s *Server) adminGetEvent(w http.ResponseWriter, r *http.Request) {
	ev, ok := s.events.Get(r.PathValue("id"))
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("no kept event with id "+strconv.Quote(r.PathValue("id"))))
		return
	}
	httpapi.WriteValue(w, http.StatusOK, ev)
}

// summaryJSON is what the server holds, in numbers, and its clock.
type summaryJSON struct {
	Accounts   int            `json:"accounts"`
	Contexts   int            `json:"contexts"`
	Webhooks   int            `json:"webhooks"`
	Events     int            `json:"events"`
	Deliveries DeliveryCounts `json:"deliveries"`
	Faults     int            `json:"faults"`
	Clock      clockJSON      `json:"clock"`
}

// adminSummary counts what the server holds: a lock and a length per
// store, whatever they hold.
func (s *Server) adminSummary(w http.ResponseWriter, r *http.Request) {
	sum := summaryJSON{Accounts: len(s.store.Accounts()), Deliveries: DeliveryCounts(s.deliveries.Counts()), Clock: s.clockState()}
	sum.Contexts, sum.Webhooks = s.store.Counts()
	sum.Events, _ = s.events.Stats()
	sum.Faults = s.faults.Len()
	httpapi.WriteValue(w, http.StatusOK, sum)
}
