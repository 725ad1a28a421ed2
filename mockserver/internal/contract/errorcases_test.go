package contract_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// TestErrorCases holds the table to its own promises: each case's type is
// its status's, its operation is the document's for its request, it is
// safe only if it cannot create, and whatever it could create carries the
// values' name or tag, so its creator finds it.
func TestErrorCases(t *testing.T) {
	t.Parallel()
	s := spec(t)
	v := contract.Values{ID: ctxID, Name: "conform-name", Tag: "conform-tag", WebhookURL: "https://example.invalid/conform-tag", Secret: "s"}
	names := map[string]bool{}
	for _, ec := range contract.ErrorCases() {
		if names[ec.Name] {
			t.Errorf("two cases named %q", ec.Name)
		}
		names[ec.Name] = true
		if got := contract.ErrorTypeOf(ec.Status); got != ec.Type {
			t.Errorf("%s: type %q for a %d, whose type is %q", ec.Name, ec.Type, ec.Status, got)
		}
		path, _, _ := strings.Cut(strings.ReplaceAll(ec.Path, "{id}", v.ID), "?")
		if got := s.Operation(ec.Method, "/v1"+path); got != ec.Operation {
			t.Errorf("%s: %s %s is operation %q in the document, the case says %q", ec.Name, ec.Method, path, got, ec.Operation)
		}
		if strings.Contains(ec.Path, "{id}") == (ec.Subject == contract.SubjectNone) {
			t.Errorf("%s: the path %q and the subject disagree", ec.Name, ec.Path)
		}
		if ec.Safe && (ec.Method == http.MethodPost || ec.Method == http.MethodPut) && ec.Auth == contract.AuthKey {
			t.Errorf("%s: a %s with the key is not safe: a server that accepts it creates", ec.Name, ec.Method)
		}
		if ec.Body == nil {
			continue
		}
		body := ec.Body(v)
		var obj map[string]any
		if ec.Method == http.MethodPost && json.Unmarshal(body, &obj) == nil && !strings.Contains(string(body), v.Tag) {
			t.Errorf("%s: a create a server may accept, without the tag that finds what it created: %s", ec.Name, body)
		}
		if ec.Status == http.StatusRequestEntityTooLarge && len(body) <= contract.MaxBodyBytes {
			t.Errorf("%s: %d bytes is not over the limit", ec.Name, len(body))
		}
	}
}
