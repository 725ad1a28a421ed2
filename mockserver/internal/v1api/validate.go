package v1api

import (
	"net/http"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
)

// contextFields are the decoded fields of a create or update body; nil
// means absent.
type contextFields struct {
	name, content *string
	tags          []string
	hasTags       bool
}

func decodeContextFields(r *http.Request) (contextFields, int, *httpapi.Error) {
	var cf contextFields
	fields, e := httpapi.ReadObject(r, "name", "content", "tags")
	if e != nil {
		return cf, 0, e
	}
	if raw, ok := fields["name"]; ok {
		s, e := httpapi.DecodeString("name", raw)
		if e != nil {
			return cf, 0, e
		}
		if e := rules.Name(s); e != nil {
			return cf, 0, e
		}
		cf.name = &s
	}
	if raw, ok := fields["content"]; ok {
		s, e := httpapi.DecodeText("content", raw)
		if e != nil {
			return cf, 0, e
		}
		if e := rules.Content(s); e != nil {
			return cf, 0, e
		}
		cf.content = &s
	}
	if raw, ok := fields["tags"]; ok {
		l, e := httpapi.DecodeStrings("tags", raw)
		if e != nil {
			return cf, 0, e
		}
		if l, e = rules.Tags(l); e != nil {
			return cf, 0, e
		}
		cf.tags, cf.hasTags = l, true
	}
	return cf, len(fields), nil
}
