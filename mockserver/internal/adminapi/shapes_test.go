package adminapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/shapetest"
)

// TestAdminShapesFollowTheWire: what the admin API shows of a context and
// of a version is the contract's object (its one definition, model's)
// with the fields each adds or leaves out said here, and a diff names its
// context and its versions' names and tags as a Version does; a field
// added to or renamed in a definition fails here until these follow.
func TestAdminShapesFollowTheWire(t *testing.T) {
	t.Parallel()
	ctx := shapetest.Fields[model.ContextJSON]()
	ctx = shapetest.Without(ctx, "content")
	ctx = shapetest.Insert(ctx, "id", shapetest.Field{Name: "account", Type: "string"})
	ctx = shapetest.Insert(ctx, "version", shapetest.Field{Name: "sizeBytes", Type: "int"})
	// The content only on GET /_mock/contexts/{id}.
	ctx = append(ctx, shapetest.Field{Name: "content", Type: "*string"})

	version := shapetest.Fields[model.VersionJSON]()
	version = shapetest.Without(version, "content")
	version = shapetest.Insert(version, "tags", shapetest.Field{Name: "sizeBytes", Type: "int"})

	// A diff's fields that are a Version's, as a Version has them.
	byName := map[string]shapetest.Field{}
	for _, f := range shapetest.Fields[model.VersionJSON]() {
		byName[f.Name] = f
	}
	as := func(name, versions string) shapetest.Field {
		return shapetest.Field{Name: name, Type: byName[versions].Type}
	}
	var diff []shapetest.Field
	for _, f := range shapetest.Fields[DiffJSON]() {
		switch f.Name {
		case "contextId", "fromName", "toName", "fromTags", "toTags":
			diff = append(diff, f)
		}
	}
	for _, tc := range []struct {
		name      string
		got, want []shapetest.Field
	}{
		{"context", shapetest.Fields[ContextJSON](), ctx},
		{"version", shapetest.Fields[VersionJSON](), version},
		{"diff", diff, []shapetest.Field{as("contextId", "contextId"), as("fromName", "name"), as("toName", "name"),
			as("fromTags", "tags"), as("toTags", "tags")}},
	} {
		if d := cmp.Diff(tc.want, tc.got); d != "" {
			t.Errorf("%s (-definition with the admin API's edits +admin API):\n%s", tc.name, d)
		}
	}
}
