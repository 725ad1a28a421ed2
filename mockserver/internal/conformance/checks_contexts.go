package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// page is the contract's list answer.
type page[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
}

func decodeInto(b []byte, v any) bool { return json.Unmarshal(b, v) == nil }

func itoa(n int) string { return strconv.Itoa(n) }

// create creates a context of the run and holds the answer to the
// contract: 201 with the context at version 1 and what was sent.
func (c *checker) create(name, content string, tags []string) (*contextsvc.Context, bool) {
	if tags == nil {
		tags = []string{c.r.tag}
	}
	body := map[string]any{"name": name, "tags": tags}
	if content != "" { // else the contract's default
		body["content"] = content
	}
	ex := c.send(request{method: http.MethodPost, path: "/contexts", body: jsonBytes(body)})
	c.r.keepAnswer(ex)
	if !c.answer(ex, http.StatusCreated, "with the created context at version 1", contract.Expect{}) {
		return nil, false
	}
	got, ok := decode[contextsvc.Context](ex)
	if !ok {
		return nil, false
	}
	want := contextsvc.Context{Name: name, Content: content, Tags: dedupe(tags), Version: 1}
	c.fields(ex, "createContext", want, got)
	return &got, true
}

// fields records each field of got that is not want's (ID and times
// are not compared; Tags nil means "not compared").
func (c *checker) fields(ex *contract.Exchange, op string, want, got contextsvc.Context) bool {
	ok := true
	diff := func(field string, w, g any) {
		ok = false
		c.value(ex, fmt.Sprintf("%s: %s is not what the contract makes it", op, field),
			fmt.Sprintf("%s %s", field, show(w)), fmt.Sprintf("%s %s", field, show(g)))
	}
	if want.Name != got.Name {
		diff("name", want.Name, got.Name)
	}
	if want.Content != got.Content {
		diff("content", want.Content, got.Content)
	}
	if want.Tags != nil && !slices.Equal(want.Tags, got.Tags) {
		diff("tags", want.Tags, got.Tags)
	}
	if want.Version != 0 && want.Version != got.Version {
		diff("version", want.Version, got.Version)
	}
	return ok
}

// show formats a value for the report, JSON where it can.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return excerpt(b, 200)
}

// dedupe drops repeated strings, keeping the first and the order.
func dedupe(in []string) []string {
	out := []string{}
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// get reads a context and holds the answer to the contract.
func (c *checker) get(id string) (*contextsvc.Context, *contract.Exchange) {
	ex := c.send(request{method: http.MethodGet, path: "/contexts/" + url.PathEscape(id)})
	if !c.answer(ex, http.StatusOK, "with the context", contract.Expect{}) {
		return nil, ex
	}
	got, ok := decode[contextsvc.Context](ex)
	if !ok {
		return nil, ex
	}
	return &got, ex
}

// update sends an update and holds the answer to the contract's 200 and
// want.
func (c *checker) update(id string, body map[string]any, want contextsvc.Context) (*contextsvc.Context, bool) {
	ex := c.send(request{method: http.MethodPut, path: "/contexts/" + url.PathEscape(id), body: jsonBytes(body)})
	if !c.answer(ex, http.StatusOK, "with the context as it is after the update", contract.Expect{}) {
		return nil, false
	}
	got, ok := decode[contextsvc.Context](ex)
	if !ok {
		return nil, false
	}
	return &got, c.fields(ex, "updateContext", want, got)
}

// checkCreate creates a context without content and with repeated tags,
// then reads it back.
func (r *runner) checkCreate(c *checker) {
	tags := []string{r.tag, "alpha", "alpha", r.tag}
	created, ok := c.create(r.name("create"), "", tags)
	if !ok {
		return
	}
	got, ex := c.get(created.ID)
	if got == nil {
		return
	}
	if !identical(*got, *created) {
		c.value(ex, "getContext: the context read differs from the one created", show(created), show(got))
	}
}

// identical reports whether two contexts are the same in every field.
func identical(a, b contextsvc.Context) bool {
	return slices.Equal(a.Tags, b.Tags) && a.ID == b.ID && a.Name == b.Name && a.Content == b.Content &&
		a.Version == b.Version && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}

// stamp formats a time of an answer for the report.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// The Markdown of the context contexts.update changes and contexts.versions
// reads: two sections, then the second changed.
const (
	mergeContent1 = "# Intro\n\nHello world.\n\n## Details\n\nMore text here.\n"
	mergeContent2 = "# Intro\n\nHello world.\n\n## Details\n\nMore text here, and more words.\n"
)

// mergeState is what contexts.update left for contexts.versions: the
// context and, for each version, what it should hold.
type mergeState struct {
	id       string
	versions []contextsvc.Version // Version, Name, Content, Tags, Changes
}

// checkUpdate walks a context through the contract's merge rules.
func (r *runner) checkUpdate(c *checker) {
	name := r.name("update")
	tags := []string{r.tag, "alpha"}
	cur, ok := c.create(name, mergeContent1, tags)
	if !ok {
		return
	}
	st := &mergeState{id: cur.ID}
	st.versions = append(st.versions, contextsvc.Version{Version: 1, Name: name, Content: mergeContent1, Tags: tags,
		Changes: contextsvc.Changes{SectionsModified: []string{"Intro", "Details"}, WordCountDelta: 7}})
	r.eventsDue = append(r.eventsDue,
		eventDue{what: "updates that change something", typ: "context.updated", contextID: cur.ID, want: 4},
		eventDue{what: "versions", typ: "context.version.created", contextID: cur.ID, want: 5})
	steps := []struct {
		what    string
		body    map[string]any
		changes contextsvc.Changes
	}{
		{"the name alone", map[string]any{"name": name + " renamed"}, contextsvc.Changes{SectionsModified: []string{}}},
		{"the content alone", map[string]any{"content": mergeContent2}, contextsvc.Changes{SectionsModified: []string{"Details"}, WordCountDelta: 3}},
		{"the tags alone", map[string]any{"tags": []string{r.tag, "beta"}}, contextsvc.Changes{SectionsModified: []string{}}},
		{"the tags to none", map[string]any{"tags": []string{}}, contextsvc.Changes{SectionsModified: []string{}}},
	}
	prev := cur
	for _, s := range steps {
		want := *prev
		want.Version = prev.Version + 1
		if v, ok := s.body["name"].(string); ok {
			want.Name = v
		}
		if v, ok := s.body["content"].(string); ok {
			want.Content = v
		}
		if v, ok := s.body["tags"].([]string); ok {
			want.Tags = v
		}
		got, ok := c.update(cur.ID, s.body, want)
		if got == nil {
			return
		}
		if ok && !got.CreatedAt.Equal(prev.CreatedAt) {
			c.value(nil, "updateContext: createdAt changed", "createdAt "+stamp(prev.CreatedAt), "createdAt "+stamp(got.CreatedAt))
		}
		if ok && got.UpdatedAt.Before(prev.UpdatedAt) {
			c.value(nil, "updateContext: updatedAt went back", "updatedAt at or after "+stamp(prev.UpdatedAt), "updatedAt "+stamp(got.UpdatedAt))
		}
		st.versions = append(st.versions, contextsvc.Version{Version: want.Version, Name: want.Name, Content: want.Content, Tags: want.Tags, Changes: s.changes})
		prev = got
	}
	// The same values again: 200 with the context as it was, no version.
	same, ok := c.update(cur.ID, map[string]any{"name": prev.Name, "tags": []string{}}, *prev)
	if ok && !same.UpdatedAt.Equal(prev.UpdatedAt) {
		c.value(nil, "updateContext: an update that changes nothing moved updatedAt", "updatedAt "+stamp(prev.UpdatedAt), "updatedAt "+stamp(same.UpdatedAt))
	}
	if got, ex := c.get(cur.ID); got != nil && !identical(*got, *prev) {
		c.value(ex, "getContext: the context read differs from the last update's answer", show(prev), show(got))
	}
	r.merge = st
}

// checkVersions reads the versions contexts.update made, whole and page by
// page.
func (r *runner) checkVersions(c *checker) {
	st := r.merge
	if st == nil {
		c.skip("needs the context contexts.update changes")
		return
	}
	path := "/contexts/" + url.PathEscape(st.id) + "/versions"
	ex := c.send(request{method: http.MethodGet, path: path})
	if !c.answer(ex, http.StatusOK, "with every version, oldest first", contract.Expect{}) {
		return
	}
	all, _ := decode[page[contextsvc.Version]](ex)
	if len(all.Data) != len(st.versions) {
		c.value(ex, "listVersions: not one version per change", fmt.Sprintf("%d versions", len(st.versions)), fmt.Sprintf("%d versions", len(all.Data)))
		return
	}
	user := ""
	for i, got := range all.Data {
		want := st.versions[i]
		label := fmt.Sprintf("listVersions: version %d", want.Version)
		if got.ContextID != st.id || got.Version != want.Version || got.Name != want.Name || got.Content != want.Content || !slices.Equal(got.Tags, want.Tags) {
			c.value(ex, label+" does not hold the context as of that version",
				show(map[string]any{"contextId": st.id, "version": want.Version, "name": want.Name, "content": want.Content, "tags": want.Tags}),
				show(map[string]any{"contextId": got.ContextID, "version": got.Version, "name": got.Name, "content": got.Content, "tags": got.Tags}))
		}
		if !slices.Equal(got.Changes.SectionsModified, want.Changes.SectionsModified) || got.Changes.WordCountDelta != want.Changes.WordCountDelta {
			c.value(ex, label+": changes are not what the contract makes them", show(want.Changes), show(got.Changes))
		}
		if user == "" {
			user = got.CreatedBy
		} else if got.CreatedBy != user {
			c.value(ex, "listVersions: versions made with one key name different users", "createdBy "+user, "createdBy "+got.CreatedBy)
		}
		if i > 0 && got.CreatedAt.Before(all.Data[i-1].CreatedAt) {
			c.value(ex, "listVersions: not oldest first", "createdAt ascending", stamp(all.Data[i-1].CreatedAt)+" then "+stamp(got.CreatedAt))
		}
	}
	r.user = user
	if all.HasMore || all.NextCursor != nil {
		c.value(ex, "listVersions: the only page says more follow", `"hasMore":false,"nextCursor":null`, shownAnswer(ex))
	}
	// Page by page, two at a time.
	var seen []int
	cursor := ""
	for range len(st.versions) {
		q := "?limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		more := len(st.versions)-len(seen) > 2
		ex := c.send(request{method: http.MethodGet, path: path + q})
		if !c.answer(ex, http.StatusOK, "with a page of at most 2 versions", contract.Expect{MorePages: more}) {
			return
		}
		p, _ := decode[page[contextsvc.Version]](ex)
		for _, v := range p.Data {
			seen = append(seen, v.Version)
		}
		if !c.pageLinks(ex, "listVersions", p.HasMore, p.NextCursor, more) || !more {
			break
		}
		cursor = *p.NextCursor
	}
	if want := []int{1, 2, 3, 4, 5}; !slices.Equal(seen, want) {
		c.value(nil, "listVersions: paging two at a time does not give every version once, in order", show(want), show(seen))
	}
}

// pageLinks holds a page's hasMore and nextCursor to the contract: more
// pages follow exactly when hasMore, and then nextCursor is a string, else
// null. It reports whether they are right.
func (c *checker) pageLinks(ex *contract.Exchange, op string, hasMore bool, next *string, more bool) bool {
	switch {
	case more && (!hasMore || next == nil || *next == ""):
		c.value(ex, op+": a page with more after it does not say so",
			`"hasMore":true and a "nextCursor"`, shownAnswer(ex))
		return false
	case !more && (hasMore || next != nil):
		c.value(ex, op+": the last page says more follow", `"hasMore":false,"nextCursor":null`, shownAnswer(ex))
		return false
	}
	return true
}

// checkList reads one page of the account's contexts, and the default
// page size. It creates nothing and compares no content: the account may
// hold anyone's contexts.
func (r *runner) checkList(c *checker) {
	ex := c.send(request{method: http.MethodGet, path: "/contexts?limit=1"})
	if c.answer(ex, http.StatusOK, "with a page of at most 1 context", contract.Expect{}) {
		p, _ := decode[page[json.RawMessage]](ex)
		if len(p.Data) > 1 {
			c.value(ex, "listContexts: a page longer than its limit", "at most 1 context", fmt.Sprintf("%d contexts", len(p.Data)))
		}
		// Whether more follow is the account's business; the two fields
		// must agree, and the cursor must work.
		if c.pageLinks(ex, "listContexts", p.HasMore, p.NextCursor, p.HasMore) && p.HasMore {
			next := c.send(request{method: http.MethodGet, path: "/contexts?limit=1&cursor=" + url.QueryEscape(*p.NextCursor)})
			c.answer(next, http.StatusOK, "with the page after the first", contract.Expect{})
		}
	}
	ex = c.send(request{method: http.MethodGet, path: "/contexts"})
	if c.answer(ex, http.StatusOK, "with a page of at most 20 contexts (the default limit)", contract.Expect{}) {
		p, _ := decode[page[json.RawMessage]](ex)
		if len(p.Data) > contract.DefaultListLimit || p.HasMore && len(p.Data) != contract.DefaultListLimit {
			c.value(ex, "listContexts: the default page is not 20 contexts",
				"20 contexts (fewer only on the last page)", fmt.Sprintf("%d contexts, hasMore %t", len(p.Data), p.HasMore))
		}
	}
}

// checkPaging creates three contexts with their own tags and pages through
// them: by two, by a cursor, by one tag, by two.
func (r *runner) checkPaging(c *checker) {
	tagSets := [][]string{{r.tag, "paging", "a"}, {r.tag, "paging", "a", "b"}, {r.tag, "paging", "b"}}
	var ids []string
	for i, tags := range tagSets {
		ctx, ok := c.create(r.name("paging "+itoa(i+1)), "", tags)
		if !ok {
			return
		}
		ids = append(ids, ctx.ID)
	}
	base := "/contexts?tag=" + url.QueryEscape(r.tag) + "&tag=paging"
	list := func(q string, want []string, more bool) (*string, bool) {
		ex := c.send(request{method: http.MethodGet, path: base + q})
		if !c.answer(ex, http.StatusOK, "with the contexts that have every tag asked for, oldest first", contract.Expect{MorePages: more}) {
			return nil, false
		}
		p, _ := decode[page[contextsvc.Context]](ex)
		var got []string
		for _, ctx := range p.Data {
			got = append(got, ctx.ID)
		}
		if !slices.Equal(got, want) {
			c.value(ex, "listContexts: a filtered page holds other contexts, or in another order", show(want), show(got))
			return nil, false
		}
		return p.NextCursor, c.pageLinks(ex, "listContexts", p.HasMore, p.NextCursor, more)
	}
	if next, ok := list("&limit=2", ids[:2], true); ok {
		list("&limit=2&cursor="+url.QueryEscape(*next), ids[2:], false)
	}
	list("", ids, false)
	list("&tag=b", ids[1:], false)
	list("&tag=a&tag=b", ids[1:2], false)
}

// checkIdempotency sends a create twice with one Idempotency-Key, then the
// key with another body, then a malformed key.
func (r *runner) checkIdempotency(c *checker) {
	key := r.tag + "-idempotency"
	body := jsonBytes(map[string]any{"name": r.name("idempotency"), "tags": []string{r.tag, "idempotency"}})
	post := func(b []byte, k string) *contract.Exchange {
		ex := c.send(request{method: http.MethodPost, path: "/contexts", body: b, header: map[string]string{contract.HeaderIdempotencyKey: k}})
		r.keepAnswer(ex)
		return ex
	}
	first := post(body, key)
	if !c.answer(first, http.StatusCreated, "with the created context", contract.Expect{}) {
		return
	}
	created, _ := decode[contextsvc.Context](first)
	r.eventsDue = append(r.eventsDue,
		eventDue{what: "creates, one of them repeated with its idempotency key", typ: "context.created", contextID: created.ID, want: 1},
		eventDue{what: "versions", typ: "context.version.created", contextID: created.ID, want: 1})
	again := post(body, key)
	if again != nil && again.Status != first.Status {
		c.value(again, "createContext: a replay's status is not the first answer's", fmt.Sprintf("%d, as the first answer", first.Status), shownAnswer(again))
	} else if c.answer(again, http.StatusCreated, "with the first answer again, and Idempotent-Replayed: true", contract.Expect{}) {
		if string(again.Body) != string(first.Body) {
			c.value(again, "createContext: a replay's body is not the first answer's", excerpt(first.Body, 300), excerpt(again.Body, 300))
		}
		if v := again.Header.Get(contract.HeaderIdempotentReplayed); v != "true" {
			c.value(again, "createContext: a replay does not say Idempotent-Replayed: true", contract.HeaderIdempotentReplayed+": true", contract.HeaderIdempotentReplayed+": "+strconv.Quote(v))
		}
		if a, b := first.Header.Get(contract.HeaderRequestID), again.Header.Get(contract.HeaderRequestID); a != "" && a == b {
			c.value(again, "createContext: a replay repeats the first answer's X-Request-Id", "a new X-Request-Id", b)
		}
	}
	ex := c.send(request{method: http.MethodGet, path: "/contexts?tag=" + url.QueryEscape(r.tag) + "&tag=idempotency"})
	if c.answer(ex, http.StatusOK, "with the one context the two requests created", contract.Expect{}) {
		p, _ := decode[page[contextsvc.Context]](ex)
		if len(p.Data) != 1 {
			for _, ctx := range p.Data {
				r.keep(ctx.ID)
			}
			c.value(ex, "createContext: a repeat with the same Idempotency-Key created again", "1 context", fmt.Sprintf("%d contexts", len(p.Data)))
		}
	}
	other := jsonBytes(map[string]any{"name": r.name("idempotency other"), "tags": []string{r.tag}})
	c.errorAnswer(post(other, key), http.StatusBadRequest, contract.TypeInvalidRequest, contract.HeaderIdempotencyKey)
	long := strings.Repeat("k", contract.MaxIdempotencyKey+1)
	c.errorAnswer(post(body, long), http.StatusBadRequest, contract.TypeInvalidRequest, contract.HeaderIdempotencyKey)
}

// checkDelete deletes a context, then finds it gone from every endpoint.
func (r *runner) checkDelete(c *checker) {
	ctx, ok := c.create(r.name("delete"), "# Gone\n\nSoon deleted.\n", nil)
	if !ok {
		return
	}
	r.eventsDue = append(r.eventsDue, eventDue{what: "deletes", typ: "context.deleted", contextID: ctx.ID, want: 1})
	p := "/contexts/" + url.PathEscape(ctx.ID)
	ex := c.send(request{method: http.MethodDelete, path: p})
	if c.answer(ex, http.StatusOK, `with {"id":"`+ctx.ID+`","deleted":true}`, contract.Expect{}) {
		res, _ := decode[struct {
			ID      string `json:"id"`
			Deleted bool   `json:"deleted"`
		}](ex)
		if res.ID != ctx.ID || !res.Deleted {
			c.value(ex, "deleteContext: the deletion result is not the context's", `{"id":"`+ctx.ID+`","deleted":true}`, shownAnswer(ex))
		}
	}
	for _, rq := range []request{
		{method: http.MethodGet, path: p},
		{method: http.MethodPut, path: p, body: jsonBytes(map[string]any{"name": r.name("delete revived")})},
		{method: http.MethodGet, path: p + "/versions"},
		{method: http.MethodGet, path: p + "/export"},
		{method: http.MethodDelete, path: p},
	} {
		ex := c.send(rq)
		r.keepAnswer(ex)
		c.errorAnswer(ex, http.StatusNotFound, contract.TypeNotFound, "")
	}
}
