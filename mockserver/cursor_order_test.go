package mockserver

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
)

// TestAdminCursorOrder: a cursor continues only the order that issued it.
// In the other order it would start over from items the client has seen
// (a newest-first cursor means "before this position"), so it is a 400
// naming cursor; in its own order it goes on.
func TestAdminCursorOrder(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := create(t, ts, `{"name":"Doc"}`)
	for i := range 4 {
		do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: fmt.Sprintf(`{"content":"v%d"}`, i+2)})
		create(t, ts, fmt.Sprintf(`{"name":"Doc %d"}`, i))
	}
	for _, list := range []string{"/_mock/events", "/_mock/contexts", "/_mock/contexts/" + c.ID + "/versions"} {
		for _, order := range []string{"asc", "desc"} {
			other := map[string]string{"asc": "desc", "desc": "asc"}[order]
			r := admin(t, ts, "GET", list+"?limit=2&order="+order, "")
			var page struct{ NextCursor *string }
			if err := json.Unmarshal(r.Body, &page); err != nil || page.NextCursor == nil {
				t.Fatalf("%s order %s: %d %s", list, order, r.Status, r.Body)
			}
			cur := url.QueryEscape(*page.NextCursor)
			if r := admin(t, ts, "GET", list+"?limit=2&order="+order+"&cursor="+cur, ""); r.Status != 200 {
				t.Errorf("%s: its own order's cursor: %d %s", list, r.Status, r.Body)
			}
			r = admin(t, ts, "GET", list+"?limit=2&order="+other+"&cursor="+cur, "")
			if _, param := r.errorOf(t); r.Status != 400 || param != "cursor" {
				t.Errorf("%s: a cursor of order %s in order %s: %d %s", list, order, other, r.Status, r.Body)
			}
		}
	}
}
