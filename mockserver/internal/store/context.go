package store

import (
	"bytes"
	"slices"
	"strconv"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Context is a stored context. Its fields change only under its account's
// write lock, and a stored string or slice is replaced, never changed in
// place, so a reader may keep a copy of the fields (a View) after
// unlocking.
//
// Each version's text is held once: content is the latest version's
// Content (the same string), and the JSON shapes are encoded on each read
// rather than cached beside the text.
type Context struct {
	seq       uint64
	id        string
	name      string
	content   string
	tags      []string
	version   int
	createdAt time.Time
	updatedAt time.Time
	versions  []*Version
	// jsonHead and jsonTail are the Context JSON around the content,
	// encoded at each change (see View): a read then encodes only the
	// content.
	jsonHead, jsonTail []byte
	// md is the analysis of content, kept so an update parses only the
	// new text; its section bodies are digests, not copies of the text.
	md markdown.Info
}

// Version is a recorded version (model.StoredVersion, the server's public
// mockserver.StoredVersion). It never changes once recorded (but for its
// Changes, worked out before a loaded state is installed).
type Version = model.StoredVersion

// The wire shapes of contexts and versions (model.ContextJSON,
// model.VersionJSON) are written here by hand into a reused buffer: a
// context's text is held once, in its version, and encoded on each read,
// so encoding must cost little more than quoting the text. Each string is
// escaped as encoding/json escapes it (<, >, & and U+2028, U+2029 too),
// so the output is byte for byte what encoding/json writes of the model's
// definitions (TestContextJSON compares them over strings that need every
// escape); a list held as nil is written [], as the contract has it.

// View is what a read needs of a context, copied under the account's lock
// and encoded after it is released: the Context JSON's fields before the
// content and after it, encoded when the context last changed, and the
// content itself. None of them is changed in place once stored, so the
// copy is safe.
type View struct {
	head    []byte // {"id":…,"name":…,"content":
	content string
	tail    []byte // ,"tags":[…],"version":N,"createdAt":…,"updatedAt":…}
}

// AppendJSON appends the Context object {"id","name","content","tags",
// "version","createdAt","updatedAt"}.
func (v *View) AppendJSON(dst []byte) []byte {
	dst = append(dst, v.head...)
	dst = jsonwire.AppendString(dst, v.content)
	return append(dst, v.tail...)
}

// newView encodes the fields of a Context around its content.
func newView(id, name, content string, tags []string, version int, createdAt, updatedAt time.Time) View {
	head := make([]byte, 0, 32+len(id)+len(name))
	head = append(head, `{"id":`...)
	head = jsonwire.AppendString(head, id)
	head = append(head, `,"name":`...)
	head = jsonwire.AppendString(head, name)
	head = append(head, `,"content":`...)
	tail := make([]byte, 0, 100+8*len(tags))
	tail = append(tail, `,"tags":`...)
	tail = jsonwire.AppendStrings(tail, tags)
	tail = append(tail, `,"version":`...)
	tail = strconv.AppendInt(tail, int64(version), 10)
	tail = append(tail, `,"createdAt":`...)
	tail = jsonwire.AppendTime(tail, createdAt)
	tail = append(tail, `,"updatedAt":`...)
	tail = jsonwire.AppendTime(tail, updatedAt)
	tail = append(tail, '}')
	// Kept with every context: without the room the encoder leaves after
	// what it wrote.
	return View{head: bytes.Clone(head), content: content, tail: bytes.Clone(tail)}
}

// AppendVersionJSON appends the Version object of v, a version of the
// context contextID: {"contextId":…} and what the version records.
func AppendVersionJSON(dst []byte, contextID string, v *Version) []byte {
	dst = append(dst, `{"contextId":`...)
	dst = jsonwire.AppendString(dst, contextID)
	return appendRecordFields(append(dst, ','), v)
}

// AppendVersionRecordJSON appends what v records, a Version without its
// contextId (model.VersionRecordJSON): the state document's version.
func AppendVersionRecordJSON(dst []byte, v *Version) []byte {
	return appendRecordFields(append(dst, '{'), v)
}

// appendRecordFields appends the members of a VersionRecordJSON and the
// object's closing brace.
func appendRecordFields(dst []byte, v *Version) []byte {
	dst = append(dst, `"version":`...)
	dst = strconv.AppendInt(dst, int64(v.Version), 10)
	dst = append(dst, `,"name":`...)
	dst = jsonwire.AppendString(dst, v.Name)
	dst = append(dst, `,"content":`...)
	dst = jsonwire.AppendString(dst, v.Content)
	dst = append(dst, `,"tags":`...)
	dst = jsonwire.AppendStrings(dst, v.Tags)
	dst = append(dst, `,"createdAt":`...)
	dst = jsonwire.AppendTime(dst, v.CreatedAt)
	dst = append(dst, `,"createdBy":`...)
	dst = jsonwire.AppendString(dst, v.CreatedBy)
	dst = append(dst, `,"changes":`...)
	dst = appendChangesJSON(dst, v.Changes)
	return append(dst, '}')
}

// appendChangesJSON appends {"sections_modified":[…],"word_count_delta":N}.
func appendChangesJSON(dst []byte, c contextsvc.Changes) []byte {
	dst = append(dst, `{"sections_modified":`...)
	dst = jsonwire.AppendStrings(dst, c.SectionsModified)
	dst = append(dst, `,"word_count_delta":`...)
	dst = strconv.AppendInt(dst, int64(c.WordCountDelta), 10)
	return append(dst, '}')
}

// encodeMeta encodes the Context JSON around the content; call it under
// the account's write lock after every change.
func (c *Context) encodeMeta() {
	v := newView(c.id, c.name, c.content, c.tags, c.version, c.createdAt, c.updatedAt)
	c.jsonHead, c.jsonTail = v.head, v.tail
}

// view copies what a read of the current context needs; call it under the
// account's lock.
func (c *Context) view() View {
	return View{head: c.jsonHead, content: c.content, tail: c.jsonTail}
}

// encode returns the current Context JSON; call it under the account's
// lock.
func (c *Context) encode() []byte {
	v := c.view()
	return v.AppendJSON(make([]byte, 0, len(v.head)+len(v.content)+len(v.tail)+16))
}

// asOfVersion returns the Context JSON as it was at version v (v must exist).
func (c *Context) asOfVersion(v *Version) []byte {
	cv := newView(c.id, v.Name, v.Content, v.Tags, v.Version, c.createdAt, v.CreatedAt)
	return cv.AppendJSON(make([]byte, 0, len(cv.head)+len(cv.content)+len(cv.tail)+16))
}

// copy returns a deep copy of c, a context of account acct; call it under
// the account's lock.
func (c *Context) copy(acct string) model.StoredContext {
	sc := model.StoredContext{
		Account: acct, ID: c.id, Name: c.name, Content: c.content, Tags: slices.Clone(c.tags),
		Version: c.version, CreatedAt: c.createdAt, UpdatedAt: c.updatedAt,
	}
	for _, v := range c.versions {
		vv := *v
		vv.Tags = slices.Clone(vv.Tags)
		vv.Changes.SectionsModified = slices.Clone(vv.Changes.SectionsModified)
		sc.Versions = append(sc.Versions, vv)
	}
	return sc
}

// NewContext builds a context of a loaded state from its versions (in
// order, at least one): its current fields are its last version's, its
// creation time its first's. Call Analyze before it is installed.
func NewContext(id string, seq uint64, versions []*Version) *Context {
	first, last := versions[0], versions[len(versions)-1]
	return &Context{
		seq: seq, id: id, versions: versions,
		name: last.Name, content: last.Content, tags: last.Tags, version: last.Version,
		createdAt: first.CreatedAt, updatedAt: last.CreatedAt,
	}
}

// ID returns the context's id.
func (c *Context) ID() string { return c.id }

// Seq returns the context's place in its account's creation order.
func (c *Context) Seq() uint64 { return c.seq }

// Analyze makes what the store keeps of a loaded context besides its
// versions, as Create and Update would have: the analysis of its content
// (so the next update is diffed against it), its encoded fields, and the
// changes of the versions marked in need (nil: none), worked out as the
// store does: a first version lists its sections, an update that keeps
// the text changes nothing, another is diffed against the one before.
// Call it before the context is installed.
func (c *Context) Analyze(need []bool) {
	var prev analysis // of the previous version's content, when made
	for i, v := range c.versions {
		changed := i == 0 || v.Content != c.versions[i-1].Content
		switch {
		case need == nil || !need[i]:
			if changed {
				prev.ok = false
			}
		case !changed:
			v.Changes = contextsvc.Changes{SectionsModified: []string{}}
		default:
			cur := markdown.Analyze([]byte(v.Content))
			switch {
			case i == 0:
				v.Changes = markdown.Diff(nil, cur)
			case prev.ok:
				v.Changes = markdown.Diff(&prev.info, cur)
			default:
				old := markdown.Analyze([]byte(c.versions[i-1].Content))
				v.Changes = markdown.Diff(&old, cur)
			}
			prev = analysis{cur, true}
		}
	}
	if !prev.ok {
		prev.info = markdown.Analyze([]byte(c.content))
	}
	c.md = prev.info
	c.encodeMeta()
}

// analysis is the Markdown analysis of a text, when it has been made.
type analysis struct {
	info markdown.Info
	ok   bool
}
