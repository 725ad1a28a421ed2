package mockserver_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// Contexts read from elsewhere (another deployment's /v1, a fixture) are
// written as a state document, which a server loads as its own: the same
// ids, versions and authors.
func ExampleWriteStateDocument() {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	user := "user_fromstaging0000000000000"
	contexts := []mockserver.StoredContext{{
		Account: "acme",
		ID:      "ctx_fromstaging000000000000",
		Versions: []mockserver.StoredVersion{
			{Version: 1, Name: "Runbook", Content: "# Deploy\n\nship it", Tags: []string{"ops"}, CreatedAt: at, CreatedBy: user,
				Changes: contextsvc.Changes{SectionsModified: []string{"Deploy"}, WordCountDelta: 2}},
			{Version: 2, Name: "Runbook", Content: "# Deploy\n\nship it today", Tags: []string{"ops"}, CreatedAt: at.Add(time.Hour), CreatedBy: user,
				Changes: contextsvc.Changes{SectionsModified: []string{"Deploy"}, WordCountDelta: 1}},
		},
	}}
	var doc bytes.Buffer
	if err := mockserver.WriteStateDocument(&doc, contexts); err != nil {
		panic(err)
	}

	srv := mockserver.New(mockserver.WithKey(mockserver.Key{Token: "sk_test", Account: "acme"}))
	defer srv.Close(context.Background())
	if err := srv.LoadState(&doc); err != nil {
		panic(err) // a context that breaks one of the API's rules: the error says where
	}
	c, _ := srv.Context("ctx_fromstaging000000000000")
	fmt.Println(c.Account, c.Name, "version", c.Version, "by", c.Versions[1].CreatedBy)
	// Output:
	// acme Runbook version 2 by user_fromstaging0000000000000
}
