package contract_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

func TestCheckRequest(t *testing.T) {
	t.Parallel()
	s := spec(t)
	tests := []struct {
		name     string
		ex       contract.Exchange
		want     []string // "where|rule", in order
		contains string   // a message part of the first mismatch
	}{
		{name: "a list", ex: contract.Exchange{Method: "GET", Path: "/v1/contexts", RawQuery: "limit=5&tag=a"}},
		{name: "a create", ex: contract.Exchange{Method: "POST", Path: "/v1/contexts", RequestBody: []byte(`{"name":"n","tags":["a"]}`)}},
		{name: "a webhook", ex: contract.Exchange{Method: "POST", Path: "/v1/webhooks",
			RequestBody: []byte(`{"url":"https://hooks.example.com/in","events":["context.created"],"secret":"s3cret-s3cret"}`)}},
		{name: "limit over 100", ex: contract.Exchange{Method: "GET", Path: "/v1/contexts", RawQuery: "limit=500"},
			want: []string{"query limit|#/components/parameters/Limit/schema/maximum"}},
		{name: "limit not a number", ex: contract.Exchange{Method: "GET", Path: "/v1/contexts", RawQuery: "limit=x"},
			want: []string{"query limit|#/components/parameters/Limit"}},
		{name: "an empty cursor", ex: contract.Exchange{Method: "GET", Path: "/v1/contexts", RawQuery: "cursor="},
			want: []string{"query cursor|#/components/parameters/Cursor/allowEmptyValue", "query cursor|#/components/parameters/Cursor/schema/minLength"}},
		{name: "no body", ex: contract.Exchange{Method: "POST", Path: "/v1/contexts"},
			want: []string{"body|#/paths/~1v1~1contexts/post/requestBody/required"}},
		{name: "not JSON", ex: contract.Exchange{Method: "POST", Path: "/v1/contexts", RequestBody: []byte(`{`)},
			want: []string{"body|#/paths/~1v1~1contexts/post/requestBody/content/application~1json/schema"}, contains: "not JSON"},
		{name: "no name, an unknown field", ex: contract.Exchange{Method: "POST", Path: "/v1/contexts", RequestBody: []byte(`{"nom":"n"}`)},
			want: []string{"body /name|#/components/schemas/CreateContextRequest/required", "body|#/components/schemas/CreateContextRequest/additionalProperties"}},
		{name: "a long idempotency key", ex: contract.Exchange{Method: "POST", Path: "/v1/contexts", RequestBody: []byte(`{"name":"n"}`),
			RequestHeader: http.Header{"Idempotency-Key": {strings.Repeat("k", 300)}}},
			want: []string{"header Idempotency-Key|#/components/parameters/IdempotencyKey/schema/maxLength"}},
		{name: "off the document", ex: contract.Exchange{Method: "PATCH", Path: "/v1/contexts"},
			want: []string{"request|#/paths"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := s.CheckRequest(&tt.ex)
			var where []string
			for _, m := range got {
				where = append(where, m.Where+"|"+m.Rule)
			}
			slices.Sort(where)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(where, want) {
				t.Fatalf("got %q\nwant %q\n%v", where, want, got)
			}
			if tt.contains != "" && !strings.Contains(got[0].Message, tt.contains) {
				t.Errorf("message %q lacks %q", got[0].Message, tt.contains)
			}
		})
	}
}
