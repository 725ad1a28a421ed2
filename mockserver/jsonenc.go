package mockserver

import (
	"bytes"
	"strconv"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// The wire shapes of contexts and versions are written into a reused
// buffer: a context's text is held once, in its version, and encoded on
// each read, so encoding must cost little more than quoting the text. Each
// string is quoted by the JSON library's encoder, escaped as encoding/json
// escapes it (<, >, & and U+2028, U+2029 too), so the output is byte for
// byte what encoding/json writes for contextJSON and versionJSON
// (TestContextJSON compares them).

// contextView is what a read needs of a context, copied under the
// account's lock and encoded after it is released: the Context JSON's
// fields before the content and after it, encoded when the context last
// changed, and the content itself. None of them is changed in place once
// stored, so the copy is safe.
type contextView struct {
	head    []byte // {"id":…,"name":…,"content":
	content string
	tail    []byte // ,"tags":[…],"version":N,"createdAt":…,"updatedAt":…}
}

// appendJSON appends the Context object {"id","name","content","tags",
// "version","createdAt","updatedAt"}.
func (v *contextView) appendJSON(dst []byte) []byte {
	dst = append(dst, v.head...)
	dst = jsonwire.AppendString(dst, v.content)
	return append(dst, v.tail...)
}

// newContextView encodes the fields of a Context around its content.
func newContextView(id, name, content string, tags []string, version int, createdAt, updatedAt time.Time) contextView {
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
	return contextView{head: bytes.Clone(head), content: content, tail: bytes.Clone(tail)}
}

// appendVersionJSON appends the Version object of v, a version of the
// context contextID.
func appendVersionJSON(dst []byte, contextID string, v *StoredVersion) []byte {
	dst = append(dst, `{"contextId":`...)
	dst = jsonwire.AppendString(dst, contextID)
	dst = append(dst, `,"version":`...)
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
