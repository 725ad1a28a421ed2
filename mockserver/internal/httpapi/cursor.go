package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"net/url"
	"strconv"
	"sync/atomic"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/page"
)

// Cursor kinds, so a versions cursor is no contexts cursor. Every list of
// both APIs has its own.
const (
	CursorContexts        byte = 'c'
	CursorVersions        byte = 'v'
	CursorEvents          byte = 'e' // admin: GET /_mock/events
	CursorDeliveries      byte = 'd' // admin: GET /_mock/deliveries
	CursorFaults          byte = 'f' // admin: GET /_mock/faults
	CursorWebhooks        byte = 'w' // admin: GET /_mock/webhooks
	CursorAccounts        byte = 'a' // admin: GET /_mock/accounts
	CursorAdminContexts   byte = 'C' // admin: GET /_mock/contexts
	CursorContextVersions byte = 'V' // admin: GET /_mock/contexts/{id}/versions
	CursorContract        byte = 'm' // admin: GET /_mock/contract/mismatches
)

// Cursors makes and checks the lists' cursors, keyed with a salt of the
// server's. A state document carries the salt, so cursors outlive a
// restart; a load replaces it, hence the atomic pointer.
type Cursors struct {
	salt atomic.Pointer[[16]byte]
}

// NewCursors returns cursors keyed with a new random salt.
func NewCursors() *Cursors {
	c := new(Cursors)
	salt := new([16]byte)
	_, _ = rand.Read(salt[:])
	c.salt.Store(salt)
	return c
}

// Salt returns the salt.
func (c *Cursors) Salt() [16]byte { return *c.salt.Load() }

// SetSalt replaces the salt (a loaded state's).
func (c *Cursors) SetSalt(salt *[16]byte) { c.salt.Store(salt) }

// Encode makes an opaque cursor for "after position pos" in the list
// of the given kind and scope: the kind, pos, and a short MAC keyed with
// the server's salt, base64url. Positions are sequence numbers (contexts)
// or version numbers, so a page starts by binary search, whatever its
// depth. The scope names the list among those of its kind (its account,
// context and filters, see listScope) and is not in the cursor: the MAC
// covers it, so a cursor continues only the list that issued it.
func (c *Cursors) Encode(kind byte, pos uint64, scope string) string {
	var b [15]byte
	b[0] = kind
	binary.BigEndian.PutUint64(b[1:9], pos)
	mac := c.mac(b[:9], scope)
	copy(b[9:], mac[:6])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (c *Cursors) mac(b []byte, scope string) [32]byte {
	h := sha256.New()
	h.Write(c.salt.Load()[:])
	h.Write(b)
	h.Write([]byte(scope))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Decode validates a cursor of the given kind and scope and returns
// its position.
func (c *Cursors) Decode(kind byte, cursor, scope string) (uint64, bool) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(b) != 15 || b[0] != kind {
		return 0, false
	}
	mac := c.mac(b[:9], scope)
	if subtle.ConstantTimeCompare(mac[:6], b[9:]) != 1 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[1:9]), true
}

// ListScope names one list among those of its kind, for a cursor's MAC:
// its parts (account, context id, filter values), each after its length,
// so that no two lists share a scope.
func ListScope(parts ...string) string {
	var b []byte
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return string(b)
}

// PageParams reads limit (1 to 100, default 20) and cursor of a list; the
// cursor must be one the list of this kind and scope issued.
func (c *Cursors) PageParams(q url.Values, kind byte, scope string) (limit int, after uint64, e *Error) {
	limit = 20
	if vs, ok := q["limit"]; ok {
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 1 || n > 100 || len(vs) > 1 {
			return 0, 0, BadRequest("limit", "limit must be one integer from 1 to 100")
		}
		limit = n
	}
	if vs, ok := q["cursor"]; ok {
		p, ok := c.Decode(kind, vs[0], scope)
		if !ok || len(vs) > 1 {
			return 0, 0, BadRequest("cursor", "cursor is not one this list returned")
		}
		after = p
	}
	return limit, after, nil
}

// ListParams reads limit and cursor as PageParams does, and order: asc
// (the default, oldest first) or desc (newest first). The order is part of
// the list a cursor continues: a cursor of the newest-first list means
// "before this position", and in the other order it would start over from
// items already seen, so it is a 400 there. (An ascending list's scope is
// scope itself, so its cursors are those issued before orders existed.)
//
// It returns the scope the page's own cursor is made for (writePage's).
func (c *Cursors) ListParams(q url.Values, kind byte, scope string) (limit int, start page.Start, pageScope string, e *Error) {
	desc := false
	if vs, ok := q["order"]; ok {
		if len(vs) > 1 || (vs[0] != "asc" && vs[0] != "desc") {
			return 0, page.Start{}, "", BadRequest("order", "order must be one of asc (oldest first, the default) and desc (newest first)")
		}
		desc = vs[0] == "desc"
	}
	if desc {
		scope += "\x00desc"
	}
	limit, pos, e := c.PageParams(q, kind, scope)
	if e != nil {
		return 0, page.Start{}, "", e
	}
	start = page.First(desc)
	if _, ok := q["cursor"]; ok {
		start.Pos = pos
	}
	return limit, start, scope, nil
}
