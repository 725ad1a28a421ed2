package contextsvc_test

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/time/rate"
)

// The examples' server: the contexts part of the API in memory, answering
// as the service's contract says (statuses, headers, JSON bodies and
// errors, cursors, idempotency keys, versions, exports), so that what an
// example prints is what the service would answer to its requests, and a
// request the service would refuse fails the example. Real code points the
// client at the service.

const (
	exampleAPIKey  = "sk_test_example" // the one key the server takes
	exampleUserID  = "user_example"    // the user that key belongs to
	examplePerMin  = 300               // the key's plan: Pro, 300 requests a minute
	exampleBurst   = 50                // and bursts of 50
	exampleMaxBody = 2 << 20           // a request body's bound, as the service's
	// exampleMaxRecords bounds what the server keeps: contexts, versions and
	// stored answers together, each of at most exampleMaxBody bytes.
	exampleMaxRecords = 1000
)

// exampleConfig is what an example's server starts with.
type exampleConfig struct {
	names       []string // contexts stored at the start, by name
	pageSize    int      // a list's default limit; 0 is the service's 20
	lostAnswers int      // creates whose answer a gateway replaces with a 502
}

// exampleServer starts the examples' server with three stored contexts:
// Onboarding, Runbook and Glossary.
func exampleServer() *httptest.Server {
	return newExampleServer(exampleConfig{names: []string{"Onboarding", "Runbook", "Glossary"}})
}

// exampleServerWithPageSize is exampleServer with lists of pageSize
// contexts by default, so that its three contexts take more than one page.
func exampleServerWithPageSize(pageSize int) *httptest.Server {
	return newExampleServer(exampleConfig{names: []string{"Onboarding", "Runbook", "Glossary"}, pageSize: pageSize})
}

// exampleLossyServer starts the examples' server, with no contexts, behind
// a gateway that loses the answer to the first create: the service creates
// the context (and keeps its answer under the request's Idempotency-Key),
// and the gateway answers 502 instead.
func exampleLossyServer() *httptest.Server {
	return newExampleServer(exampleConfig{lostAnswers: 1})
}

func newExampleServer(cfg exampleConfig) *httptest.Server {
	s := &exampleAPI{
		byID:     map[string]*exampleContext{},
		answers:  map[string]exampleAnswer{},
		pageSize: cmp.Or(cfg.pageSize, 20),
		limiter:  rate.NewLimiter(rate.Limit(examplePerMin)/60, exampleBurst),
		mux:      http.NewServeMux(),
	}
	for _, name := range cfg.names {
		s.store(name, "", []string{})
	}
	s.routes()
	var gateway sync.Mutex
	lose := cfg.lostAnswers
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gateway.Lock()
		lost := lose > 0 && r.Method == http.MethodPost && r.URL.Path == "/v1/contexts"
		if lost {
			lose--
		}
		gateway.Unlock()
		if !lost {
			s.ServeHTTP(w, r)
			return
		}
		s.ServeHTTP(httptest.NewRecorder(), r) // the service acts; its answer goes nowhere
		http.Error(w, "502 Bad Gateway", http.StatusBadGateway)
	}))
}

// exampleAPI is the service's state: one account, one key.
type exampleAPI struct {
	mu       sync.Mutex
	contexts []*exampleContext // in creation order, deleted ones too: a cursor is a position
	byID     map[string]*exampleContext
	answers  map[string]exampleAnswer // a create's answer, by its Idempotency-Key
	records  int                      // contexts, versions and answers kept
	pageSize int
	limiter  *rate.Limiter
	mux      *http.ServeMux
}

type exampleContext struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Content   string   `json:"content"`
	Tags      []string `json:"tags"`
	Version   int      `json:"version"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
	versions  []*exampleVersion
	deleted   bool
}

type exampleVersion struct {
	ContextID string         `json:"contextId"`
	Version   int            `json:"version"`
	Name      string         `json:"name"`
	Content   string         `json:"content"`
	Tags      []string       `json:"tags"`
	CreatedAt string         `json:"createdAt"`
	CreatedBy string         `json:"createdBy"`
	Changes   exampleChanges `json:"changes"`
}

type exampleChanges struct {
	SectionsModified []string `json:"sections_modified"`
	WordCountDelta   int      `json:"word_count_delta"`
}

// exampleAnswer is a create's answer kept for a repeat with its key.
type exampleAnswer struct {
	request [sha256.Size]byte // of the method, path and body it answered
	status  int
	header  http.Header
	body    []byte
}

func (s *exampleAPI) routes() {
	allow := func(methods string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", methods)
			exampleError(w, http.StatusMethodNotAllowed, "method_not_allowed", "",
				fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, methods))
		}
	}
	s.mux.HandleFunc("GET /v1/contexts", s.list)
	s.mux.HandleFunc("POST /v1/contexts", s.create)
	s.mux.HandleFunc("/v1/contexts", allow("GET, POST"))
	s.mux.HandleFunc("GET /v1/contexts/{id}", s.get)
	s.mux.HandleFunc("PUT /v1/contexts/{id}", s.update)
	s.mux.HandleFunc("DELETE /v1/contexts/{id}", s.delete)
	s.mux.HandleFunc("/v1/contexts/{id}", allow("GET, PUT, DELETE"))
	s.mux.HandleFunc("GET /v1/contexts/{id}/versions", s.listVersions)
	s.mux.HandleFunc("/v1/contexts/{id}/versions", allow("GET"))
	s.mux.HandleFunc("GET /v1/contexts/{id}/export", s.export)
	s.mux.HandleFunc("/v1/contexts/{id}/export", allow("GET"))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		exampleError(w, http.StatusNotFound, "not_found", "", fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
	})
}

// ServeHTTP gives every answer a request id, and lets through only the
// right key, within its plan's rate.
func (s *exampleAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Request-Id", "req_"+strings.ToLower(rand.Text()))
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(key), []byte(exampleAPIKey)) != 1 {
		h.Set("WWW-Authenticate", "Bearer")
		exampleError(w, http.StatusUnauthorized, "unauthorized", "", "missing or invalid API key: send Authorization: Bearer <key>")
		return
	}
	now := time.Now()
	allowed := s.limiter.AllowN(now, 1)
	tokens := max(s.limiter.TokensAt(now), 0)
	perSecond := float64(examplePerMin) / 60
	h.Set("X-RateLimit-Limit", strconv.Itoa(examplePerMin))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(int(tokens)))
	h.Set("X-RateLimit-Reset", strconv.Itoa(int(math.Ceil((exampleBurst-tokens)/perSecond))))
	if !allowed {
		h.Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil((1-tokens)/perSecond)))))
		exampleError(w, http.StatusTooManyRequests, "rate_limited", "", "rate limit reached: 300 requests a minute")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mux.ServeHTTP(w, r)
}

func (s *exampleAPI) list(w http.ResponseWriter, r *http.Request) {
	tags := r.URL.Query()["tag"]
	s.page(w, r, len(s.contexts), func(i int) (any, bool) {
		c := s.contexts[i]
		return c, !c.deleted && !slices.ContainsFunc(tags, func(t string) bool { return !slices.Contains(c.Tags, t) })
	})
}

func (s *exampleAPI) get(w http.ResponseWriter, r *http.Request) {
	if c := s.find(w, r); c != nil {
		exampleJSON(w, http.StatusOK, c)
	}
}

// create creates a context once per Idempotency-Key: a repeat of the same
// request gets the first answer again, marked Idempotent-Replayed.
func (s *exampleAPI) create(w http.ResponseWriter, r *http.Request) {
	body, ok := exampleBody(w, r)
	if !ok {
		return
	}
	keys := r.Header.Values("Idempotency-Key")
	if len(keys) == 0 {
		s.createContext(w, body)
		return
	}
	if len(keys) > 1 || keys[0] == "" || len(keys[0]) > 255 ||
		strings.ContainsFunc(keys[0], func(c rune) bool { return c < ' ' || c > '~' }) {
		exampleError(w, http.StatusBadRequest, "invalid_request", "Idempotency-Key", "Idempotency-Key must be one value of 1 to 255 printable ASCII characters")
		return
	}
	request := sha256.Sum256(append([]byte(r.Method+" "+r.URL.Path+"\n"), body...))
	if prev, ok := s.answers[keys[0]]; ok {
		if prev.request != request {
			exampleError(w, http.StatusBadRequest, "invalid_request", "Idempotency-Key",
				"this Idempotency-Key was used with another request; use a new key for a new request")
			return
		}
		maps.Copy(w.Header(), prev.header)
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(prev.status)
		w.Write(prev.body)
		return
	}
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Request-Id", w.Header().Get("X-Request-Id")) // for an error's body
	s.createContext(rec, body)
	if rec.Code < 500 && s.records < exampleMaxRecords {
		s.answers[keys[0]] = exampleAnswer{request: request, status: rec.Code, header: http.Header{"Content-Type": rec.Header().Values("Content-Type")}, body: rec.Body.Bytes()}
		s.records++
	}
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

func (s *exampleAPI) createContext(w http.ResponseWriter, body []byte) {
	f, ok := exampleFieldsOf(w, body)
	switch {
	case !ok:
	case f.name == nil:
		exampleError(w, http.StatusBadRequest, "invalid_request", "name", "name is required")
	case s.full(w, 2):
	default:
		content, tags := "", []string{}
		if f.content != nil {
			content = *f.content
		}
		if f.tags != nil {
			tags = f.tags
		}
		exampleJSON(w, http.StatusCreated, s.store(*f.name, content, tags))
	}
}

// store adds a context at version 1.
func (s *exampleAPI) store(name, content string, tags []string) *exampleContext {
	now := exampleNow()
	c := &exampleContext{ID: "ctx_" + strings.ToLower(rand.Text()), Name: name, Content: content, Tags: tags, Version: 1, CreatedAt: now, UpdatedAt: now}
	s.contexts = append(s.contexts, c)
	s.byID[c.ID] = c
	s.records++
	s.addVersion(c, "")
	return c
}

// update merges the fields sent into the context; a change is a version.
func (s *exampleAPI) update(w http.ResponseWriter, r *http.Request) {
	c := s.find(w, r)
	if c == nil {
		return
	}
	body, ok := exampleBody(w, r)
	if !ok {
		return
	}
	f, ok := exampleFieldsOf(w, body)
	if !ok {
		return
	}
	if f.name == nil && f.content == nil && f.tags == nil {
		exampleError(w, http.StatusBadRequest, "invalid_request", "", "the body must carry at least one of name, content, tags")
		return
	}
	name, content, tags := *cmp.Or(f.name, &c.Name), *cmp.Or(f.content, &c.Content), c.Tags
	if f.tags != nil {
		tags = f.tags
	}
	if name == c.Name && content == c.Content && slices.Equal(tags, c.Tags) {
		exampleJSON(w, http.StatusOK, c) // nothing differs: no new version
		return
	}
	if s.full(w, 1) {
		return
	}
	before := c.Content
	c.Name, c.Content, c.Tags, c.Version, c.UpdatedAt = name, content, tags, c.Version+1, exampleNow()
	s.addVersion(c, before)
	exampleJSON(w, http.StatusOK, c)
}

func (s *exampleAPI) delete(w http.ResponseWriter, r *http.Request) {
	if c := s.find(w, r); c != nil {
		c.deleted = true
		exampleJSON(w, http.StatusOK, map[string]any{"id": c.ID, "deleted": true})
	}
}

// addVersion records the context as it is now, with what changed since the
// content before.
func (s *exampleAPI) addVersion(c *exampleContext, before string) {
	c.versions = append(c.versions, &exampleVersion{
		ContextID: c.ID, Version: c.Version, Name: c.Name, Content: c.Content, Tags: c.Tags,
		CreatedAt: c.UpdatedAt, CreatedBy: exampleUserID, Changes: exampleChangesOf(before, c.Content),
	})
	s.records++
}

func (s *exampleAPI) listVersions(w http.ResponseWriter, r *http.Request) {
	if c := s.find(w, r); c != nil {
		s.page(w, r, len(c.versions), func(i int) (any, bool) { return c.versions[i], true })
	}
}

// exampleFormats are the export formats this server renders: the service's
// but html and pdf.
var exampleFormats = map[string]struct{ mediaType, ext string }{
	"markdown": {"text/markdown; charset=utf-8", "md"},
	"md":       {"text/markdown; charset=utf-8", "md"},
	"text":     {"text/plain; charset=utf-8", "txt"},
	"txt":      {"text/plain; charset=utf-8", "txt"},
	"json":     {"application/json", "json"},
}

func (s *exampleAPI) export(w http.ResponseWriter, r *http.Request) {
	c := s.find(w, r)
	if c == nil {
		return
	}
	q := r.URL.Query()
	format, ok := exampleFormats[cmp.Or(q.Get("format"), "markdown")]
	switch {
	case q.Get("format") == "html" || q.Get("format") == "pdf":
		exampleError(w, http.StatusBadRequest, "invalid_request", "format", "this example server exports markdown, text and json; the service also html and pdf")
		return
	case !ok:
		exampleError(w, http.StatusBadRequest, "invalid_request", "format", "format must be one of markdown (md), html, text (txt), json, pdf")
		return
	}
	v := c.versions[len(c.versions)-1]
	if q.Has("version") {
		n, err := strconv.Atoi(q.Get("version"))
		if err != nil || n < 1 {
			exampleError(w, http.StatusBadRequest, "invalid_request", "version", "version must be a whole number from 1")
			return
		}
		if n > len(c.versions) {
			exampleError(w, http.StatusNotFound, "not_found", "version", fmt.Sprintf("context %q has no version %d", c.ID, n))
			return
		}
		v = c.versions[n-1]
	}
	var doc []byte
	switch format.ext {
	case "md":
		doc = []byte(v.Content)
	case "txt":
		doc = []byte(exampleText(v.Content))
	case "json":
		doc, _ = json.Marshal(&exampleContext{ID: c.ID, Name: v.Name, Content: v.Content, Tags: v.Tags, Version: v.Version, CreatedAt: c.CreatedAt, UpdatedAt: v.CreatedAt})
	}
	w.Header().Set("Content-Type", format.mediaType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment",
		map[string]string{"filename": fmt.Sprintf("%s-v%d.%s", v.Name, v.Version, format.ext)}))
	w.Write(doc)
}

// find returns the context the path names, or answers 404.
func (s *exampleAPI) find(w http.ResponseWriter, r *http.Request) *exampleContext {
	id := r.PathValue("id")
	c := s.byID[id]
	if c == nil || c.deleted {
		exampleError(w, http.StatusNotFound, "not_found", "", fmt.Sprintf("no context with id %q", id))
		return nil
	}
	return c
}

// full answers 403 when n more records would pass the server's bound.
func (s *exampleAPI) full(w http.ResponseWriter, n int) bool {
	if s.records+n > exampleMaxRecords {
		exampleError(w, http.StatusForbidden, "forbidden", "", fmt.Sprintf("this example server keeps at most %d contexts, versions and stored answers", exampleMaxRecords))
		return true
	}
	return false
}

// page answers one page of a list of n entries, of which item(i) says
// whether the i-th is in it: the request's limit (else the server's page
// size) of them after its cursor, and the cursor of the page after. A
// cursor names its list and a position in it, so any page costs the same.
func (s *exampleAPI) page(w http.ResponseWriter, r *http.Request, n int, item func(i int) (any, bool)) {
	q := r.URL.Query()
	limit := s.pageSize
	if v := q["limit"]; v != nil {
		l, err := strconv.Atoi(v[0])
		if len(v) != 1 || err != nil || l < 1 || l > 100 {
			exampleError(w, http.StatusBadRequest, "invalid_request", "limit", "limit must be one integer from 1 to 100")
			return
		}
		limit = l
	}
	cursor := func(i int) string {
		return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s@%d", r.URL.Path, i))
	}
	i := 0
	if v := q["cursor"]; v != nil {
		b, _ := base64.RawURLEncoding.DecodeString(v[0])
		at, found := bytes.CutPrefix(b, []byte(r.URL.Path+"@"))
		var err error
		if i, err = strconv.Atoi(string(at)); len(v) != 1 || !found || err != nil || i < 1 || i > n || cursor(i) != v[0] {
			exampleError(w, http.StatusBadRequest, "invalid_request", "cursor", "cursor is not one this list returned")
			return
		}
	}
	data := []any{}
	for ; i < n && len(data) < limit; i++ {
		if v, ok := item(i); ok {
			data = append(data, v)
		}
	}
	var next *string
	for j := i; j < n; j++ {
		if _, ok := item(j); ok {
			c := cursor(i)
			next = &c
			break
		}
	}
	exampleJSON(w, http.StatusOK, map[string]any{"data": data, "hasMore": next != nil, "nextCursor": next})
}

// exampleBody reads a request's JSON body, at most exampleMaxBody bytes.
func exampleBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		exampleError(w, http.StatusBadRequest, "invalid_request", "", "send the body as JSON, with Content-Type: application/json")
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, exampleMaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		exampleError(w, http.StatusRequestEntityTooLarge, "payload_too_large", "", "the body is over 2 MiB")
		return nil, false
	case err != nil:
		exampleError(w, http.StatusBadRequest, "invalid_request", "", "reading the body: "+err.Error())
		return nil, false
	}
	return body, true
}

// exampleFields are the fields of a create or update body; nil is absent.
type exampleFields struct {
	name, content *string
	tags          []string
}

// exampleFieldsOf reads a create or update body, checking each field as the
// contract says; on bad input it answers the 400 itself.
func exampleFieldsOf(w http.ResponseWriter, body []byte) (exampleFields, bool) {
	var f exampleFields
	bad := func(param, msg string) (exampleFields, bool) {
		exampleError(w, http.StatusBadRequest, "invalid_request", param, msg)
		return exampleFields{}, false
	}
	var raw map[string]json.RawMessage
	if !utf8.Valid(body) || json.Unmarshal(body, &raw) != nil || raw == nil {
		return bad("", "the body must be a JSON object in UTF-8")
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := raw[k]
		if string(bytes.TrimSpace(v)) == "null" {
			return bad(k, k+" must not be null")
		}
		var err error
		switch k {
		case "name":
			err = json.Unmarshal(v, &f.name)
		case "content":
			err = json.Unmarshal(v, &f.content)
		case "tags":
			err = json.Unmarshal(v, &f.tags)
		default:
			return bad(k, fmt.Sprintf("unknown field %q (allowed: name, content, tags)", k))
		}
		if err != nil {
			return bad(k, k+" has the wrong type: "+err.Error())
		}
	}
	switch {
	case f.name != nil && (strings.TrimSpace(*f.name) == "" || utf8.RuneCountInString(*f.name) > 200):
		return bad("name", "name must be 1 to 200 characters, not only white space")
	case f.content != nil && len(*f.content) > 1_000_000:
		return bad("content", "content must be at most 1,000,000 bytes")
	case len(f.tags) > 20:
		return bad("tags", "at most 20 tags")
	}
	var tags []string
	for _, t := range f.tags {
		if n := utf8.RuneCountInString(t); n < 1 || n > 50 {
			return bad("tags", "each tag must be 1 to 50 characters")
		}
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	if f.tags != nil {
		f.tags = append([]string{}, tags...) // duplicates dropped, order kept; [] clears
	}
	return f, true
}

// exampleChangesOf says what the content after changed from before: the
// sections (by heading) whose text was added, changed or removed, and the
// words gained.
func exampleChangesOf(before, after string) exampleChanges {
	oldNames, oldText := exampleSections(before)
	newNames, newText := exampleSections(after)
	changes := exampleChanges{SectionsModified: []string{}, WordCountDelta: exampleWords(after) - exampleWords(before)}
	for _, name := range newNames {
		if old, ok := oldText[name]; !ok || strings.TrimSpace(old) != strings.TrimSpace(newText[name]) {
			changes.SectionsModified = append(changes.SectionsModified, name)
		}
	}
	for _, name := range oldNames {
		if _, ok := newText[name]; !ok {
			changes.SectionsModified = append(changes.SectionsModified, name)
		}
	}
	return changes
}

// exampleSections splits Markdown at its ATX headings ("## Title"; none
// inside a fenced code block, the headings these examples write), giving
// each heading's text in order and the section text under it; text before
// the first heading is the section "(preamble)".
func exampleSections(md string) ([]string, map[string]string) {
	var names []string
	text := map[string]*strings.Builder{}
	name, fenced := "(preamble)", false
	for line := range strings.Lines(md) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if heading, ok := exampleHeading(line); ok && !fenced {
			name = heading
			if text[name] == nil {
				names, text[name] = append(names, name), &strings.Builder{}
			}
			continue
		}
		if text[name] == nil {
			if strings.TrimSpace(line) == "" {
				continue // blank lines are no preamble
			}
			names, text[name] = append(names, name), &strings.Builder{}
		}
		text[name].WriteString(line)
	}
	sections := make(map[string]string, len(text))
	for name, b := range text {
		sections[name] = b.String()
	}
	return names, sections
}

// exampleHeading returns the text of an ATX heading line.
func exampleHeading(line string) (string, bool) {
	line = strings.TrimRight(line, "\r\n")
	t := strings.TrimLeft(line, " ")
	level := len(t) - len(strings.TrimLeft(t, "#"))
	if len(line)-len(t) > 3 || level < 1 || level > 6 || (len(t) > level && t[level] != ' ' && t[level] != '\t') {
		return "", false
	}
	text := strings.TrimSpace(t[level:])
	if c := strings.TrimRight(text, "#"); c == "" || strings.HasSuffix(c, " ") || strings.HasSuffix(c, "\t") {
		text = strings.TrimSpace(c) // a closing run of #
	}
	return text, true
}

// exampleText renders Markdown as plain text, as far as these examples
// write it: headings without their #, emphasis without its *, the lines of
// a fenced code block as they are, without the fences.
func exampleText(md string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.Lines(md) {
		line = strings.TrimRight(line, "\r\n")
		switch heading, isHeading := exampleHeading(line); {
		case strings.HasPrefix(strings.TrimSpace(line), "```"):
			fenced = !fenced
			continue
		case fenced:
		case isHeading:
			line = heading
		default:
			line = strings.ReplaceAll(line, "*", "")
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// exampleWords counts the words of the rendered text: runs without space
// holding a letter or digit (so a list's "-" is none).
func exampleWords(md string) int {
	n := 0
	for _, w := range strings.Fields(exampleText(md)) {
		if strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			n++
		}
	}
	return n
}

func exampleNow() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

func exampleJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// exampleError answers the contract's error body.
func exampleError(w http.ResponseWriter, status int, typ, param, msg string) {
	detail := map[string]string{"type": typ, "message": msg, "requestId": w.Header().Get("X-Request-Id")}
	if param != "" {
		detail["param"] = param
	}
	exampleJSON(w, status, map[string]any{"error": detail})
}

// TestExampleServer checks that the examples' server refuses what the
// service refuses, so an example whose requests go wrong fails: the steps
// run in order against one server, "{id}" and "{cursor}" standing for the
// id an earlier step created and the cursor it was given.
func TestExampleServer(t *testing.T) {
	t.Parallel()
	srv := exampleServerWithPageSize(2)
	defer srv.Close()
	const key, js = exampleAPIKey, "application/json"
	steps := []struct {
		name                     string
		method, path, key, ctype string
		body, idemKey            string
		wantStatus               int
		wantParam, wantHeader    string
		wantItems                int  // on a list page
		wantLast                 bool // no page after it
	}{
		{name: "no key", method: "GET", path: "/v1/contexts", wantStatus: 401, wantHeader: "WWW-Authenticate"},
		{name: "another key", method: "GET", path: "/v1/contexts", key: "sk_test_other", wantStatus: 401},
		{name: "first page", method: "GET", path: "/v1/contexts", key: key, wantStatus: 200, wantHeader: "X-RateLimit-Limit", wantItems: 2},
		{name: "next page", method: "GET", path: "/v1/contexts?cursor={cursor}", key: key, wantStatus: 200, wantItems: 1, wantLast: true},
		{name: "made-up cursor", method: "GET", path: "/v1/contexts?cursor=QA", key: key, wantStatus: 400, wantParam: "cursor"},
		{name: "limit 0", method: "GET", path: "/v1/contexts?limit=0", key: key, wantStatus: 400, wantParam: "limit"},
		{name: "body not JSON", method: "POST", path: "/v1/contexts", key: key, ctype: "text/plain", body: `{"name":"Plan"}`, wantStatus: 400},
		{name: "unknown field", method: "POST", path: "/v1/contexts", key: key, ctype: js, body: `{"name":"Plan","contnet":"x"}`, wantStatus: 400, wantParam: "contnet"},
		{name: "null name", method: "POST", path: "/v1/contexts", key: key, ctype: js, body: `{"name":null}`, wantStatus: 400, wantParam: "name"},
		{name: "no name", method: "POST", path: "/v1/contexts", key: key, ctype: js, body: `{"tags":["a"]}`, wantStatus: 400, wantParam: "name"},
		{name: "create", method: "POST", path: "/v1/contexts", key: key, ctype: js, body: `{"name":"Plan"}`, idemKey: "job-1", wantStatus: 201},
		{name: "repeat", method: "POST", path: "/v1/contexts", key: key, ctype: js, body: `{"name":"Plan"}`, idemKey: "job-1", wantStatus: 201, wantHeader: "Idempotent-Replayed"},
		{name: "key of another request", method: "POST", path: "/v1/contexts", key: key, ctype: js, body: `{"name":"Other"}`, idemKey: "job-1", wantStatus: 400, wantParam: "Idempotency-Key"},
		{name: "another list's cursor", method: "GET", path: "/v1/contexts/{id}/versions?cursor={cursor}", key: key, wantStatus: 400, wantParam: "cursor"},
		{name: "empty update", method: "PUT", path: "/v1/contexts/{id}", key: key, ctype: js, body: `{}`, wantStatus: 400},
		{name: "method", method: "PATCH", path: "/v1/contexts/{id}", key: key, ctype: js, body: `{"name":"x"}`, wantStatus: 405, wantHeader: "Allow"},
		{name: "export format", method: "GET", path: "/v1/contexts/{id}/export?format=docx", key: key, wantStatus: 400, wantParam: "format"},
		{name: "export version", method: "GET", path: "/v1/contexts/{id}/export?version=2", key: key, wantStatus: 404, wantParam: "version"},
		{name: "delete", method: "DELETE", path: "/v1/contexts/{id}", key: key, wantStatus: 200},
		{name: "deleted", method: "GET", path: "/v1/contexts/{id}", key: key, wantStatus: 404},
	}
	vars := map[string]string{}
	for _, st := range steps {
		path := st.path
		for k, v := range vars {
			path = strings.ReplaceAll(path, k, v)
		}
		resp, got := exampleRequest(t, srv, st.method, path, st.key, st.ctype, st.body, st.idemKey)
		rid := resp.Header.Get("X-Request-Id")
		switch {
		case resp.StatusCode != st.wantStatus || got.Error.Param != st.wantParam:
			t.Errorf("%s: %s %s = %d %+v; want %d, param %q", st.name, st.method, path, resp.StatusCode, got.Error, st.wantStatus, st.wantParam)
		case st.wantHeader != "" && resp.Header.Get(st.wantHeader) == "":
			t.Errorf("%s: no %s header", st.name, st.wantHeader)
		case st.wantItems != 0 && (len(got.Data) != st.wantItems || st.wantLast != (got.NextCursor == nil) || got.HasMore == st.wantLast):
			t.Errorf("%s: %d contexts, hasMore %v, next cursor %v; want %d, last %v", st.name, len(got.Data), got.HasMore, got.NextCursor, st.wantItems, st.wantLast)
		case !strings.HasPrefix(rid, "req_") || (resp.StatusCode >= 400 && got.Error.RequestID != rid):
			t.Errorf("%s: request id %q, in the error %q", st.name, rid, got.Error.RequestID)
		}
		if resp.StatusCode == http.StatusCreated {
			if vars["{id}"] != "" && vars["{id}"] != got.ID {
				t.Errorf("%s: created %s, and %s before with the same key", st.name, got.ID, vars["{id}"])
			}
			vars["{id}"] = got.ID
		}
		if got.NextCursor != nil {
			vars["{cursor}"] = url.QueryEscape(*got.NextCursor)
		}
	}
}

// TestExampleLossyServer checks the lost answer: the create behind the 502
// is done once, and only a repeat with its key gets its answer.
func TestExampleLossyServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		keys       [2]string // of the lost create and of its retry
		wantStored int
	}{
		{name: "same key", keys: [2]string{"job-1", "job-1"}, wantStored: 1},
		{name: "another key", keys: [2]string{"job-1", "job-2"}, wantStored: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := exampleLossyServer()
			defer srv.Close()
			var status [2]int
			var replayed [2]string
			for i, k := range tc.keys {
				resp, _ := exampleRequest(t, srv, "POST", "/v1/contexts", exampleAPIKey, "application/json", `{"name":"Runbook"}`, k)
				status[i], replayed[i] = resp.StatusCode, resp.Header.Get("Idempotent-Replayed")
			}
			_, list := exampleRequest(t, srv, "GET", "/v1/contexts", exampleAPIKey, "", "", "")
			wantReplayed := map[bool]string{true: "true"}[tc.keys[0] == tc.keys[1]]
			if status != [2]int{502, 201} || replayed[1] != wantReplayed || len(list.Data) != tc.wantStored {
				t.Errorf("answers %v, replayed %q, %d contexts stored; want [502 201], %q, %d", status, replayed[1], len(list.Data), wantReplayed, tc.wantStored)
			}
		})
	}
}

// exampleReply holds what the tests read of an answer.
type exampleReply struct {
	ID         string            `json:"id"`
	Data       []json.RawMessage `json:"data"`
	HasMore    bool              `json:"hasMore"`
	NextCursor *string           `json:"nextCursor"`
	Error      struct {
		Type, Param, RequestID string
	} `json:"error"`
}

// exampleRequest sends one request to srv; an answer that is not JSON (a
// gateway's 502 aside) fails the test.
func exampleRequest(t *testing.T, srv *httptest.Server, method, path, key, ctype, body, idemKey string) (*http.Response, exampleReply) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for h, v := range map[string]string{"Authorization": "Bearer " + key, "Content-Type": ctype, "Idempotency-Key": idemKey} {
		if v != "" && v != "Bearer " {
			req.Header.Set(h, v)
		}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got exampleReply
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil && resp.StatusCode != http.StatusBadGateway {
		t.Errorf("%s %s: %d, body: %v", method, path, resp.StatusCode, err)
	}
	return resp, got
}

// TestExampleChanges checks the changes a version records.
func TestExampleChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		before, after string
		want          exampleChanges
	}{
		{"", "# Deploy\n\nShip it.", exampleChanges{[]string{"Deploy"}, 3}},
		{"# Deploy\n\nShip it.", "# Deploy\n\nShip it on Tuesdays.", exampleChanges{[]string{"Deploy"}, 2}},
		{"Intro.\n# A\n\nx\n## B ##\n\ny", "Intro.\n## B\n\ny z\n", exampleChanges{[]string{"B", "A"}, -1}},
		{"", "```\n# not a heading\n```\n", exampleChanges{[]string{"(preamble)"}, 3}},
		{"# A\n\nx", "# A\n\nx\n", exampleChanges{[]string{}, 0}},
	} {
		if got := exampleChangesOf(tc.before, tc.after); !slices.Equal(got.SectionsModified, tc.want.SectionsModified) || got.WordCountDelta != tc.want.WordCountDelta {
			t.Errorf("exampleChangesOf(%q, %q) = %+v; want %+v", tc.before, tc.after, got, tc.want)
		}
	}
}
