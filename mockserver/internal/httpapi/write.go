package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// jsonType is the Content-Type of every JSON answer, one slice for all of
// them: a header's values are replaced or appended to (which copies a
// full slice), never changed in place, so sharing it saves every answer
// an allocation.
var jsonType = []string{"application/json"}

// WriteJSON writes pre-encoded JSON with status.
func WriteJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonType
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// WriteValue encodes v as the JSON response.
func WriteValue(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		WriteError(w, &Error{Status: http.StatusInternalServerError, Type: TypeInternal, Message: "encoding the response: " + err.Error()})
		return
	}
	WriteJSON(w, status, b)
}

// WritePage writes the /v1 list shape {"data":[…],"hasMore":…,
// "nextCursor":…} of items, each encoded as its MarshalJSON gives it, and
// the cursor of the list (kind, scope) for position next when next > 0
// (more follow).
func WritePage[T json.Marshaler](w http.ResponseWriter, c *Cursors, kind byte, scope string, items []T, next uint64) {
	buf := jsonwire.GetBuffer()
	b := append((*buf)[:0], `{"data":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		j, err := it.MarshalJSON()
		if err != nil {
			jsonwire.PutBuffer(buf)
			WriteError(w, &Error{Status: http.StatusInternalServerError, Type: TypeInternal, Message: "encoding the response: " + err.Error()})
			return
		}
		b = append(b, j...)
	}
	cursor := ""
	if next > 0 {
		cursor = c.Encode(kind, next, scope)
	}
	*buf = AppendListEnd(b, next > 0, cursor)
	WriteJSON(w, http.StatusOK, *buf)
	jsonwire.PutBuffer(buf)
}

// AppendListEnd closes a list page begun with `{"data":[`:
// `],"hasMore":…,"nextCursor":…}`.
func AppendListEnd(b []byte, hasMore bool, next string) []byte {
	b = append(b, `],"hasMore":`...)
	b = strconv.AppendBool(b, hasMore)
	b = append(b, `,"nextCursor":`...)
	if hasMore {
		b = strconv.AppendQuote(b, next)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}
