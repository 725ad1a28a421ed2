package jsonwire

import (
	"bytes"
	"encoding/json"
)

// MarshalText encodes v as json.Marshal does but without HTML's escapes:
// a '<', '>' or '&' in a string is itself, not "\u003c" (a JSON reader
// takes either, and a person reads only the first). Every answer is JSON
// served as application/json, never HTML, so the escapes guard nothing.
func MarshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
