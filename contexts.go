package contextsvc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ContextsService holds the operations on contexts, their versions and
// exports. Use it through [Client.Contexts].
//
// The methods that take a context id put it in the request's path as one
// segment. They refuse, with [ErrInvalidArgument] and before sending
// anything, an id that would not stay one segment or that no id of the
// service looks like: empty, "." or "..", one holding "/", "\", "?", "#",
// "%" or ";", white space, a control character or anything beyond ASCII,
// or one longer than 255 bytes.
type ContextsService struct {
	client *Client
}

// Context is a named Markdown document with tags.
type Context struct {
	// ID is the context's identifier ("ctx_…"); treat it as opaque.
	ID string `json:"id"`
	// Name is the human-readable title.
	Name string `json:"name"`
	// Content is the Markdown text.
	Content string `json:"content"`
	// Tags are free labels.
	Tags []string `json:"tags"`
	// Version starts at 1 and goes up with every update that changes
	// something.
	Version int `json:"version"`
	// CreatedAt is when the context was created.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the context last changed (its latest version).
	UpdatedAt time.Time `json:"updatedAt"`
}

// Version is one recorded state of a context, with what changed from the
// version before.
type Version struct {
	// ContextID is the id of the context this is a version of.
	ContextID string `json:"contextId"`
	// Version is the version number, from 1.
	Version int `json:"version"`
	// Name is the context's name as of this version.
	Name string `json:"name"`
	// Content is the Markdown text as of this version.
	Content string `json:"content"`
	// Tags are the labels as of this version.
	Tags []string `json:"tags"`
	// CreatedAt is when this version was recorded.
	CreatedAt time.Time `json:"createdAt"`
	// CreatedBy is the id of the user ("user_…") whose key made it.
	CreatedBy string `json:"createdBy"`
	// Changes describes what this version changed in the Markdown.
	Changes Changes `json:"changes"`
}

// validate checks what the client needs of a context: its id.
func (c *Context) validate() string {
	if c.ID == "" {
		return "a context without an id"
	}
	return ""
}

// validate checks what the client needs of a version: the context's id and
// the version's number, which start at 1.
func (v *Version) validate() string {
	switch {
	case v.ContextID == "":
		return "a version without its contextId"
	case v.Version < 1:
		return "a version numbered " + strconv.Itoa(v.Version) + ", not from 1 on"
	}
	return ""
}

// ContextList is one page of contexts.
type ContextList struct {
	// Data holds the page's contexts, oldest first.
	Data []*Context `json:"data"`
	// HasMore tells whether another page follows.
	HasMore bool `json:"hasMore"`
	// NextCursor fetches the next page (ContextListOptions.Cursor); empty
	// on the last page.
	NextCursor string `json:"nextCursor,omitempty"`
}

// VersionList is one page of a context's versions.
type VersionList struct {
	// Data holds the page's versions, oldest first.
	Data []*Version `json:"data"`
	// HasMore tells whether another page follows.
	HasMore bool `json:"hasMore"`
	// NextCursor fetches the next page (VersionListOptions.Cursor); empty
	// on the last page.
	NextCursor string `json:"nextCursor,omitempty"`
}

// ContextListOptions selects a page of contexts. The zero value (or nil)
// asks for the first page with the service's default size.
type ContextListOptions struct {
	// Limit is the page size, 1 to 100; 0 means the service's default (20).
	Limit int
	// Cursor continues after a previous page (its NextCursor).
	Cursor string
	// Tags keeps only contexts that have all of these tags.
	Tags []string
}

// VersionListOptions selects a page of versions. The zero value (or nil)
// asks for the first page with the service's default size.
type VersionListOptions struct {
	// Limit is the page size, 1 to 100; 0 means the service's default (20).
	Limit int
	// Cursor continues after a previous page (its NextCursor).
	Cursor string
}

// CreateContextRequest is the body of [ContextsService.Create].
type CreateContextRequest struct {
	// Name is required.
	Name string `json:"name"`
	// Content is the Markdown text; empty by default.
	Content string `json:"content,omitempty"`
	// Tags are the labels; none by default.
	Tags []string `json:"tags,omitempty"`
}

// UpdateContextRequest is the body of [ContextsService.Update]. Only the
// fields that are set are sent and changed; the others stay as they are.
// Name and Content are set when not nil (use [Ptr]); Tags is set when not
// nil, so an empty non-nil slice ([]string{}) clears the tags.
type UpdateContextRequest struct {
	// Name, when not nil, replaces the name.
	Name *string `json:"name,omitempty"`
	// Content, when not nil, replaces the Markdown text.
	Content *string `json:"content,omitempty"`
	// Tags, when not nil, replaces the tags; []string{} clears them.
	Tags []string `json:"tags,omitzero"`
}

// Ptr returns a pointer to v, for the optional fields of
// [UpdateContextRequest].
func Ptr[T any](v T) *T { return &v }

// DeleteResult is the answer to [ContextsService.Delete].
type DeleteResult struct {
	// ID is the deleted context's id.
	ID string `json:"id"`
	// Deleted is true once the context is gone.
	Deleted bool `json:"deleted"`
	// Inferred is true when no answer said the context was deleted: an
	// earlier attempt of the call may have deleted it (its answer was a
	// 500, 502 or 504, or was lost after the request was written) and a
	// later attempt found no such context (404). The context is gone
	// either way; whether this call deleted it, or it was deleted already
	// (or never existed), is not known.
	Inferred bool `json:"inferred,omitempty"`
}

// ExportFormat is a document format of [ContextsService.Export].
type ExportFormat string

// The export formats the service offers.
const (
	ExportMarkdown ExportFormat = "markdown" // text/markdown; the default
	ExportHTML     ExportFormat = "html"     // text/html, rendered from the Markdown
	ExportText     ExportFormat = "text"     // text/plain
	ExportJSON     ExportFormat = "json"     // the Context object
	ExportPDF      ExportFormat = "pdf"      // application/pdf
)

// ExportOptions selects what [ContextsService.Export] returns. The zero
// value (or nil) asks for the current version in the service's default
// format.
type ExportOptions struct {
	// Format is the document format; empty means the service's default
	// (Markdown).
	Format ExportFormat
	// Version exports an earlier version; 0 means the current one.
	Version int
}

// Export is an exported document. Body streams its bytes: the caller must
// close it.
type Export struct {
	// Body is the document. Close it when done.
	Body io.ReadCloser
	// ContentType is the media type with its parameters, e.g.
	// "text/markdown; charset=utf-8".
	ContentType string
	// Filename is the name suggested by Content-Disposition: its UTF-8
	// filename* (RFC 6266, "Ünïcödé Straße-v1.pdf") when present, else its
	// filename ("unicode-strasse-v1.pdf"), made safe to save as it is in
	// the caller's directory on Linux, macOS and Windows: only its last path
	// element; without control or format characters; the characters
	// Windows refuses (< > : " | ? * and the drive or stream colon of
	// "C:evil.pdf" or "report.pdf:evil.exe") written as "_"; without
	// leading dots (no hidden ".bashrc") or trailing dots and spaces; a
	// Windows device name ("CON", "nul.txt") prefixed with "_"; and cut to
	// 255 bytes, keeping its extension. Empty when none was given or
	// nothing usable is left.
	Filename string
	// ContentLength is the size in bytes, or -1 when unknown.
	ContentLength int64
}

// maxFilename is the longest file name most file systems take, in bytes.
const maxFilename = 255

// List returns one page of contexts, oldest first.
func (s *ContextsService) List(ctx context.Context, opts *ContextListOptions, ropts ...RequestOption) (*ContextList, error) {
	p := "/contexts"
	if opts != nil {
		q := url.Values{}
		if opts.Limit != 0 {
			q.Set("limit", strconv.Itoa(opts.Limit))
		}
		if opts.Cursor != "" {
			q.Set("cursor", opts.Cursor)
		}
		for _, t := range opts.Tags {
			q.Add("tag", t)
		}
		if len(q) > 0 {
			p += "?" + q.Encode()
		}
	}
	var page ContextList
	var err error
	page.Data, page.HasMore, page.NextCursor, err = listPage[Context](ctx, s.client, p, "contexts", ropts)
	if err != nil {
		return nil, err
	}
	return &page, nil
}

// All iterates over every context, page after page, starting where opts
// says (nil: from the first). It stops after yielding the first error, and
// fetches no further page once the loop breaks. The request options apply
// to every page's request (WithResponseInto: the latest page's).
func (s *ContextsService) All(ctx context.Context, opts *ContextListOptions, ropts ...RequestOption) iter.Seq2[*Context, error] {
	var o ContextListOptions
	if opts != nil {
		o = *opts
	}
	return paginate(s.client, o.Cursor, func(cursor string) ([]*Context, bool, string, error) {
		po := o // a copy per page, so the sequence can be ranged more than once
		po.Cursor = cursor
		page, err := s.List(ctx, &po, ropts...)
		if err != nil {
			return nil, false, "", err
		}
		return page.Data, page.HasMore, page.NextCursor, nil
	})
}

// Get returns the context with this id.
func (s *ContextsService) Get(ctx context.Context, id string, opts ...RequestOption) (*Context, error) {
	p, err := contextPath(id, "")
	if err != nil {
		return nil, err
	}
	return doJSON[Context](ctx, s.client, http.MethodGet, p, nil, opts)
}

// Create creates a context; the service answers with it at version 1.
//
// The request carries an Idempotency-Key, the same on every attempt (a
// fresh random one, or the caller's from [WithIdempotencyKey]), so it is
// retried after a server error or a lost connection like an update: if an
// attempt was processed but its answer lost, the service answers the retry
// with the context it created then, and creates it (and fires its events)
// only once.
func (s *ContextsService) Create(ctx context.Context, req *CreateContextRequest, opts ...RequestOption) (*Context, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: Create: nil request", ErrInvalidArgument)
	}
	return doJSON[Context](ctx, s.client, http.MethodPost, "/contexts", req, opts)
}

// Update changes the fields set in req and returns the context as it is
// afterwards. If nothing differs, the context (and its version) is
// unchanged.
func (s *ContextsService) Update(ctx context.Context, id string, req *UpdateContextRequest, opts ...RequestOption) (*Context, error) {
	p, err := contextPath(id, "")
	if err != nil {
		return nil, err
	}
	if req == nil || (req.Name == nil && req.Content == nil && req.Tags == nil) {
		return nil, fmt.Errorf("%w: Update: no field set", ErrInvalidArgument)
	}
	return doJSON[Context](ctx, s.client, http.MethodPut, p, req, opts)
}

// Delete deletes the context. The service may answer with a body or with
// 204 No Content; either way a nil error means it is gone.
//
// A retried Delete survives its own success: when an earlier attempt of
// this call may have acted (it was answered with a 500, 502 or 504, or
// failed after the request was written, e.g. a connection reset) and a
// later attempt is answered 404, the earlier one most likely deleted the
// context and only its answer was lost, so Delete returns success,
// DeleteResult{ID: id, Deleted: true, Inferred: true}; WithResponseInto
// shows the 404 and the attempts. A 404 on the first attempt, or after
// attempts that say the request was not processed (429, 503) or cannot
// have reached the service (a failure to connect), is [ErrNotFound].
func (s *ContextsService) Delete(ctx context.Context, id string, opts ...RequestOption) (*DeleteResult, error) {
	p, err := contextPath(id, "")
	if err != nil {
		return nil, err
	}
	resp, cs, err := s.client.call(ctx, http.MethodDelete, p, nil, headerAcceptJSON, opts)
	defer cs.end()
	if err != nil {
		if cs.mayHaveActed && errors.Is(err, ErrNotFound) {
			return &DeleteResult{ID: id, Deleted: true, Inferred: true}, nil
		}
		return nil, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	drainAndClose(resp.Body)
	res := &DeleteResult{ID: id, Deleted: true}
	// Any body (or none) on a 2xx means success: read what it says if it
	// is the documented object, ignore it otherwise.
	var doc struct {
		ID      *string `json:"id"`
		Deleted *bool   `json:"deleted"`
	}
	if len(bytes.TrimSpace(body)) > 0 && unmarshalJSON(body, &doc) == nil {
		if doc.ID != nil && *doc.ID != "" {
			res.ID = *doc.ID
		}
		if doc.Deleted != nil {
			res.Deleted = *doc.Deleted
		}
	}
	return res, nil
}

// ListVersions returns one page of the context's versions, oldest first.
func (s *ContextsService) ListVersions(ctx context.Context, id string, opts *VersionListOptions, ropts ...RequestOption) (*VersionList, error) {
	p, err := contextPath(id, "/versions")
	if err != nil {
		return nil, err
	}
	if opts != nil {
		q := url.Values{}
		if opts.Limit != 0 {
			q.Set("limit", strconv.Itoa(opts.Limit))
		}
		if opts.Cursor != "" {
			q.Set("cursor", opts.Cursor)
		}
		if len(q) > 0 {
			p += "?" + q.Encode()
		}
	}
	var page VersionList
	page.Data, page.HasMore, page.NextCursor, err = listPage[Version](ctx, s.client, p, "versions", ropts)
	if err != nil {
		return nil, err
	}
	return &page, nil
}

// AllVersions iterates over every version of the context, page after page.
// It stops after yielding the first error, and fetches no further page once
// the loop breaks. The request options apply to every page's request.
func (s *ContextsService) AllVersions(ctx context.Context, id string, opts *VersionListOptions, ropts ...RequestOption) iter.Seq2[*Version, error] {
	var o VersionListOptions
	if opts != nil {
		o = *opts
	}
	return paginate(s.client, o.Cursor, func(cursor string) ([]*Version, bool, string, error) {
		po := o
		po.Cursor = cursor
		page, err := s.ListVersions(ctx, id, &po, ropts...)
		if err != nil {
			return nil, false, "", err
		}
		return page.Data, page.HasMore, page.NextCursor, nil
	})
}

// Export returns the context as a document in the chosen format (nil opts:
// the current version as Markdown), streamed: the caller must close the
// result's Body. The call, bounded by [WithCallTimeout], ends when the
// answer's headers came; the Body has no total bound, so a large document
// is read to its end however long it takes, but each read of it has the
// stall bound ([WithStallTimeout]).
func (s *ContextsService) Export(ctx context.Context, id string, opts *ExportOptions, ropts ...RequestOption) (*Export, error) {
	p, err := contextPath(id, "/export")
	if err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &ExportOptions{}
	}
	if opts.Version < 0 {
		return nil, fmt.Errorf("%w: Export: negative version %d", ErrInvalidArgument, opts.Version)
	}
	q := url.Values{}
	if opts.Format != "" {
		q.Set("format", string(opts.Format))
	}
	if opts.Version > 0 {
		q.Set("version", strconv.Itoa(opts.Version))
	}
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	resp, cs, err := s.client.call(ctx, http.MethodGet, p, nil, headerAcceptAny, ropts)
	if err != nil {
		cs.end()
		return nil, err
	}
	if resp.ContentLength > s.client.maxBody {
		drainAndClose(resp.Body)
		cs.end()
		return nil, s.client.tooLarge(cs)
	}
	// The Body is read after Export returns, for as long as the document
	// takes to come: the call's bound ends here, the stall bound of each
	// read goes on (WithStallTimeout), and closing the Body ends the call.
	if !cs.detach() {
		resp.Body.Close()
		cs.end()
		return nil, s.client.wrapErr(cs, &timeoutError{bound: boundCall, d: s.client.callTimeout})
	}
	return &Export{
		Body:          &boundedBody{ReadCloser: resp.Body, left: s.client.maxBody, err: s.client.tooLarge(cs), release: cs.end},
		ContentType:   resp.Header.Get("Content-Type"),
		Filename:      dispositionFilename(resp.Header.Get("Content-Disposition")),
		ContentLength: resp.ContentLength,
	}, nil
}

var headerAcceptAny = []string{"*/*"}

// boundedBody is an export's Body: it reads at most left bytes of the
// answer, and fails with err (an ErrResponseTooLarge) when there are more.
// Closing it releases the call (release).
type boundedBody struct {
	io.ReadCloser
	left    int64
	err     error
	release func()
}

// Close closes the answer's body and releases the call.
func (b *boundedBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the bound: one more byte says whether the body goes on.
		var probe [1]byte
		if n, err := b.ReadCloser.Read(probe[:]); n > 0 {
			return 0, b.err
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// dispositionFilename returns the file name of a Content-Disposition value,
// safe to save as it is (see Export.Filename): mime.ParseMediaType gives
// filename* (RFC 2231/5987, decoded) in preference to filename; then
// safeFilename cleans it.
func dispositionFilename(cd string) string {
	if cd == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(cd)
	if err != nil {
		return ""
	}
	return safeFilename(params["filename"])
}

// safeFilename makes a name the server suggests safe to save in the
// caller's directory on any common system. Invalid UTF-8 becomes U+FFFD;
// control and format characters (a right-to-left override could disguise
// an extension) are dropped; the name is reduced to its last path element
// (either slash), so that saving it cannot escape the directory; the
// characters Windows refuses in a name become "_" (a colon would name a
// drive, "C:evil.pdf", or an NTFS stream, "report.pdf:evil.exe"); leading
// dots (a hidden file, ".bashrc") and spaces, and trailing dots and spaces
// (which Windows strips), are dropped; a Windows device name, alone or
// before an extension ("CON", "nul.txt", "COM1"), gets a "_" in front; and
// the name is cut to maxFilename bytes, keeping an extension.
func safeFilename(name string) string {
	name = strings.Map(func(r rune) rune {
		switch {
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r):
			return -1
		case strings.ContainsRune(`<>:"|?*`, r):
			return '_'
		}
		return r
	}, strings.ToValidUTF8(name, "\uFFFD"))
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimLeft(name, ". ")
	name = strings.TrimRight(name, ". ")
	if name == "" {
		return ""
	}
	if windowsDeviceName(name) {
		name = "_" + name
	}
	return cutFilename(name, maxFilename)
}

// windowsDeviceName reports whether Windows reads name as a device (CON,
// PRN, AUX, NUL, COM0 to COM9, LPT0 to LPT9, with the superscript digits
// too, CONIN$, CONOUT$) rather than a file: the part before the first dot,
// without trailing spaces, in any case.
func windowsDeviceName(name string) bool {
	stem, _, _ := strings.Cut(name, ".")
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch stem {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if rest, ok := strings.CutPrefix(stem, "COM"); ok {
		stem = rest
	} else if rest, ok := strings.CutPrefix(stem, "LPT"); ok {
		stem = rest
	} else {
		return false
	}
	switch stem {
	case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
		return true
	}
	return false
}

// cutFilename cuts name to at most max bytes on a character boundary,
// keeping its extension (the part from the last dot, if it is short) so
// that a cut name still opens with the same program.
func cutFilename(name string, max int) string {
	if len(name) <= max {
		return name
	}
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i > 0 && len(name)-i <= 16 {
		name, ext = name[:i], name[i:]
	}
	keep := max - len(ext)
	for keep > 0 && !utf8.RuneStart(name[keep]) {
		keep--
	}
	stem := strings.TrimRight(name[:keep], ". ")
	if stem == "" {
		return ""
	}
	return stem + ext
}

// contextPath builds /contexts/{id}{suffix}, refusing an id that is not
// one path segment as it stands (see idProblem): "" would address the
// list, ".." the parent, "a/b" another resource.
func contextPath(id, suffix string) (string, error) {
	if problem := idProblem(id); problem != "" {
		return "", fmt.Errorf("%w: context id %s: %s", ErrInvalidArgument, shownID(id), problem)
	}
	return "/contexts/" + url.PathEscape(id) + suffix, nil
}

// maxIDLength bounds an id the client puts in a path: the service's are a
// prefix and some 26 characters (see the API contract).
const maxIDLength = 255

// idProblem says why id cannot stand as one segment of a request's path
// ("" when it can). Ids are opaque, but the service's are printable ASCII
// (a prefix, then base32 or hex), so the client refuses what no id of
// the service holds and what would make the path mean something else to
// the service or to a proxy on the way: a dot segment ("." or ".."), which
// a server or proxy resolves to the parent path; a path separator ("/",
// and "\", which some servers read as one); the start of a query ("?") or
// a fragment ("#"); "%", which a proxy that decodes the path once more
// turns into any of these ("%2e%2e", "%2f"); ";", which starts path
// parameters that some servers drop ("..;" read as ".."); and white space,
// control characters and anything beyond ASCII, which would have to be
// escaped and may be normalised on the way. What passes stays one segment
// once escaped (url.PathEscape escapes only the few printable characters
// left that a path cannot hold as they are, such as '"' and '|'), and
// stays so if a proxy decodes it again.
func idProblem(id string) string {
	switch {
	case id == "":
		return "empty"
	case id == "." || id == "..":
		return "a dot segment, which a server or proxy resolves to another path"
	case len(id) > maxIDLength:
		return fmt.Sprintf("%d bytes long, more than the %d an id may have", len(id), maxIDLength)
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c == '/' || c == '\\':
			return fmt.Sprintf("contains %q, a path separator", string(rune(c)))
		case c == '?' || c == '#':
			return fmt.Sprintf("contains %q, which would end the path", string(rune(c)))
		case c == '%':
			return `contains "%", which a server or proxy may decode into another path`
		case c == ';':
			return `contains ";", which starts path parameters that a server may drop`
		case c <= ' ' || c >= 0x7f:
			return "contains white space, a control character or a character beyond ASCII, which no id has"
		}
	}
	return ""
}

// shownID quotes an id for an error message: escaped (%+q), and cut to 64
// bytes, since the caller's argument may be anything at all.
func shownID(id string) string {
	const most = 64
	if len(id) <= most {
		return fmt.Sprintf("%+q", id)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return fmt.Sprintf("%+q…", id[:cut])
}

// doJSON sends a request and decodes a 2xx JSON body into a new T.
func doJSON[T any](ctx context.Context, c *Client, method, path string, body any, opts []RequestOption) (*T, error) {
	resp, cs, err := c.call(ctx, method, path, body, headerAcceptJSON, opts)
	defer cs.end()
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := c.decodeJSON(resp, cs, v); err != nil {
		return nil, err
	}
	return v, nil
}

// listEnvelope is every object shape a list may come in: the contract's
// {"data"} and the alternatives {"contexts"} / {"versions"}.
type listEnvelope[T any] struct {
	Data       []*T    `json:"data"`
	Contexts   []*T    `json:"contexts"`
	Versions   []*T    `json:"versions"`
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
}

// listPage fetches one page and decodes it whatever its shape: a bare JSON
// array (a single, complete page) or an object (see listEnvelope). alt is
// the resource's own key ("contexts" or "versions"), preferred after "data".
// A page that is null, an object without its list, or a list with a null
// or incomplete entry is an ErrMalformedResponse.
func listPage[T any](ctx context.Context, c *Client, p, alt string, opts []RequestOption) (items []*T, hasMore bool, next string, err error) {
	resp, cs, err := c.call(ctx, http.MethodGet, p, nil, headerAcceptJSON, opts)
	defer cs.end()
	if err != nil {
		return nil, false, "", err
	}
	buf, err := c.readBody(resp, cs)
	defer releaseBody(buf)
	if err != nil {
		return nil, false, "", err
	}
	// Decode once, into the shape the first byte announces.
	if t := bytes.TrimLeft(buf.b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if err := c.unmarshalBody(buf.b, cs, &items); err != nil {
			return nil, false, "", err
		}
		return items, false, "", checkItems(cs, items)
	}
	var env listEnvelope[T]
	if err := c.unmarshalBody(buf.b, cs, &env); err != nil {
		return nil, false, "", err
	}
	items = env.Data
	if items == nil {
		if alt == "versions" {
			items = env.Versions
		} else {
			items = env.Contexts
		}
	}
	if items == nil {
		// null, {} or {"data":null}: an empty page is [], not nothing.
		return nil, false, "", malformed(cs, "a list page without its data")
	}
	if env.NextCursor != nil {
		next = *env.NextCursor
	}
	return items, env.HasMore, next, checkItems(cs, items)
}

// checkItems refuses a page with a null entry or one the client cannot use
// (see validator): ranging over a page, or All, never hands the caller a
// nil *Context or one without its id.
func checkItems[T any](cs *callState, items []*T) error {
	for i, it := range items {
		if it == nil {
			return malformed(cs, "entry "+strconv.Itoa(i)+" of the list is null")
		}
		if v, ok := any(it).(validator); ok {
			if problem := v.validate(); problem != "" {
				return malformed(cs, "entry "+strconv.Itoa(i)+" of the list: "+problem)
			}
		}
	}
	return nil
}

// MaxEmptyPages is how many empty pages in a row [ContextsService.All] and
// [ContextsService.AllVersions] follow while each says more pages follow;
// the next such page ends the iteration with [ErrPaginationLoop].
const MaxEmptyPages = 16

// maxTrackedCursors bounds the cursors an iteration remembers exactly
// (their 64-bit hashes: about 1 MiB at most); past it, cycles are found by
// Brent's algorithm, in constant memory (see cursorSet).
const maxTrackedCursors = 1 << 15

// paginate turns a page fetcher into an iterator that follows the cursors
// until a page says there are no more. Pages that would never end are an
// ErrPaginationLoop: one that claims more but gives no cursor, a cursor
// already followed in this iteration (a cycle: A, B, A… would be fetched
// for ever), or more than MaxEmptyPages empty pages in a row.
func paginate[T any](c *Client, cursor string, fetch func(cursor string) ([]*T, bool, string, error)) iter.Seq2[*T, error] {
	// A cursor is the server's text: shown redacted, cut and inert.
	shown := func(cursor string) string { return inert(redactString(cursor, c.apiKey), maxErrorToken) }
	return func(yield func(*T, error) bool) {
		cur := cursor
		var seen cursorSet
		if cur != "" {
			seen.repeated(cur)
		}
		empty := 0
		for {
			items, more, next, err := fetch(cur)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if !more {
				return
			}
			if len(items) == 0 {
				empty++
			} else {
				empty = 0
			}
			switch {
			case next == "":
				yield(nil, fmt.Errorf("%w: the service said more pages follow but gave no cursor (after %q)",
					ErrPaginationLoop, shown(cur)))
				return
			case seen.repeated(next):
				yield(nil, fmt.Errorf("%w: the service gave the cursor %q again: the same pages would follow for ever",
					ErrPaginationLoop, shown(next)))
				return
			case empty > MaxEmptyPages:
				yield(nil, fmt.Errorf("%w: %d empty pages in a row, each saying more follow", ErrPaginationLoop, empty))
				return
			}
			cur = next
		}
	}
}

// cursorSet remembers the cursors of one iteration, to find a cycle: the
// first maxTrackedCursors exactly (by hash), so a cycle among them is found
// when it first comes round; beyond them by Brent's cycle detection, which
// compares each cursor with one saved at power-of-two distances and so
// finds any cycle, in constant memory, within about four times the pages
// fetched before it.
type cursorSet struct {
	seed  maphash.Seed
	seen  map[uint64]struct{}
	saved uint64 // Brent's saved cursor (hash)
	power int    // distance at which the next one is saved
	steps int    // cursors since the last one was saved
}

// repeated adds cursor and reports whether it was there already.
func (s *cursorSet) repeated(cursor string) bool {
	if s.seen == nil {
		s.seed = maphash.MakeSeed()
		s.seen = make(map[uint64]struct{})
		s.power = 1
		s.saved = maphash.String(s.seed, cursor)
		s.seen[s.saved] = struct{}{}
		return false
	}
	h := maphash.String(s.seed, cursor)
	if h == s.saved {
		return true
	}
	if s.steps++; s.steps == s.power {
		s.saved, s.power, s.steps = h, s.power*2, 0
	}
	if _, ok := s.seen[h]; ok {
		return true
	}
	if len(s.seen) < maxTrackedCursors {
		s.seen[h] = struct{}{}
	}
	return false
}
