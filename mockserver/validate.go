package mockserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// Field limits of the contract.
const (
	maxNameRunes   = 200
	maxContentLen  = 1_000_000
	maxTags        = 20
	maxTagRunes    = 50
	maxSecretRunes = 256
	maxURLLen      = 2048
)

func validName(name string) *httpapi.Error {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > maxNameRunes {
		return httpapi.BadRequest("name", fmt.Sprintf("name must be 1 to %d characters, got %d", maxNameRunes, n))
	}
	if strings.TrimFunc(name, unicode.IsSpace) == "" {
		return httpapi.BadRequest("name", "name must not be only white space")
	}
	return nil
}

func validContent(content string) *httpapi.Error {
	if len(content) > maxContentLen {
		return httpapi.BadRequest("content", fmt.Sprintf("content must be at most %d bytes, got %d", maxContentLen, len(content)))
	}
	return nil
}

// cleanTags drops duplicates (first kept, order kept) and checks the
// limits; the count limit applies after duplicates are dropped, as that is
// what would be stored. It stops at the first distinct tag past the limit,
// so the duplicate check never scans more than maxTags kept tags: a 2 MiB
// body holds some 300,000 short tags, and checking each against all the
// ones before it took minutes of CPU.
func cleanTags(tags []string) ([]string, *httpapi.Error) {
	out := make([]string, 0, min(len(tags), maxTags))
	for i, t := range tags {
		n := utf8.RuneCountInString(t)
		if n < 1 || n > maxTagRunes {
			return nil, httpapi.BadRequest("tags", fmt.Sprintf("tags[%d] must be 1 to %d characters, got %d", i, maxTagRunes, n))
		}
		if slices.Contains(out, t) {
			continue
		}
		if len(out) == maxTags {
			return nil, httpapi.BadRequest("tags", fmt.Sprintf("at most %d tags (after duplicates are dropped), got %d", maxTags, distinctCount(tags)))
		}
		out = append(out, t)
	}
	return out, nil
}

// distinctCount counts the distinct strings of l, in linear time.
func distinctCount(l []string) int {
	seen := make(map[string]struct{}, len(l))
	for _, s := range l {
		seen[s] = struct{}{}
	}
	return len(seen)
}

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
		if e := validName(s); e != nil {
			return cf, 0, e
		}
		cf.name = &s
	}
	if raw, ok := fields["content"]; ok {
		s, e := httpapi.DecodeText("content", raw)
		if e != nil {
			return cf, 0, e
		}
		if e := validContent(s); e != nil {
			return cf, 0, e
		}
		cf.content = &s
	}
	if raw, ok := fields["tags"]; ok {
		l, e := httpapi.DecodeStrings("tags", raw)
		if e != nil {
			return cf, 0, e
		}
		if l, e = cleanTags(l); e != nil {
			return cf, 0, e
		}
		cf.tags, cf.hasTags = l, true
	}
	return cf, len(fields), nil
}
