package contextsvc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

func ExampleNewClient() {
	// An empty key would fall back to CONTEXTSVC_API_KEY, a missing
	// WithBaseURL to CONTEXTSVC_BASE_URL.
	client, err := contextsvc.NewClient("sk_live_do_not_print",
		contextsvc.WithBaseURL("https://api.example.com/v1"),
		contextsvc.WithPlan(contextsvc.ProPlan()), // pace to 300/min, at most 49 at once
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(client) // the key is never printed
	// Output: contextsvc.Client{BaseURL: "https://api.example.com/v1", APIKey: [REDACTED]}
}

func ExampleContextsService_Create() {
	srv := exampleServer()
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}

	c, err := client.Contexts.Create(context.Background(), &contextsvc.CreateContextRequest{
		Name:    "Release notes",
		Content: "# 1.0\n\nFirst release.",
		Tags:    []string{"release"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Name, c.Version, c.Tags)
	// Output: Release notes 1 [release]
}

func ExampleContextsService_All() {
	srv := exampleServerWithPageSize(2) // three contexts, two to a page
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}

	// All follows the cursors page after page; breaking out of the loop
	// stops fetching.
	for c, err := range client.Contexts.All(context.Background(), nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.Name, c.Version)
	}
	// Output:
	// Onboarding 1
	// Runbook 1
	// Glossary 1
}

func ExampleError() {
	srv := exampleServer()
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}

	_, err = client.Contexts.Get(context.Background(), "ctx_missing")
	if errors.Is(err, contextsvc.ErrNotFound) {
		fmt.Println("not found")
	}
	var apiErr *contextsvc.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Type, apiErr.Message)
		fmt.Println(strings.HasPrefix(apiErr.RequestID, "req_")) // quote it to support
	}
	// Output:
	// not found
	// 404 not_found no context with id "ctx_missing"
	// true
}

func ExampleWithResponseInto() {
	srv := exampleServer()
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}

	// The Response is this call's own: its status, request id, rate limit
	// and attempts, filled on success and on error alike.
	var resp contextsvc.Response
	c, err := client.Contexts.Create(context.Background(),
		&contextsvc.CreateContextRequest{Name: "Release notes"},
		contextsvc.WithResponseInto(&resp),
		contextsvc.WithRequestHeader("X-Trace-Id", "trace-7f3a"),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Name, resp.StatusCode, resp.Attempts, resp.RateLimit.Limit)
	fmt.Println(strings.HasPrefix(resp.RequestID, "req_"), resp.IdempotencyKey != "")
	// Output:
	// Release notes 201 1 300
	// true true
}

func ExampleWithIdempotencyKey() {
	srv := exampleServer()
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}

	// A job that may run twice (a restart, a redelivered message) derives
	// the key from its own id: the second run gets the first one's answer
	// and creates nothing.
	req := &contextsvc.CreateContextRequest{Name: "Import 2026-11-21"}
	key := contextsvc.WithIdempotencyKey("import-job-4711")
	var first, second contextsvc.Response
	a, err := client.Contexts.Create(context.Background(), req, key, contextsvc.WithResponseInto(&first))
	if err != nil {
		log.Fatal(err)
	}
	b, err := client.Contexts.Create(context.Background(), req, key, contextsvc.WithResponseInto(&second))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.ID == b.ID, first.Replayed, second.Replayed)
	// Output: true false true
}

func ExampleContextsService_Create_lostAnswer() {
	// The service creates the context, then its answer is lost (a
	// gateway's 502): the client retries with the same idempotency key and
	// gets the stored answer. One context is created, not two.
	srv := exampleLossyServer()
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"),
		contextsvc.WithRetryWait(10*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	var resp contextsvc.Response
	c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Runbook"},
		contextsvc.WithResponseInto(&resp))
	if err != nil {
		log.Fatal(err)
	}
	page, err := client.Contexts.List(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Name, resp.StatusCode, resp.Attempts, resp.Replayed)
	fmt.Println(len(page.Data), "context stored")
	// Output:
	// Runbook 201 2 true
	// 1 context stored
}

// A client paced to its plan creates a context, and an error is matched
// by its class. (The server here answers as the service does; in
// production the key and base URL are yours, or come from
// CONTEXTSVC_API_KEY and CONTEXTSVC_BASE_URL.)
func Example() {
	srv := exampleServer()
	defer srv.Close()
	apiKey, baseURL := "sk_test_example", srv.URL+"/v1"
	ctx := context.Background()

	client, err := contextsvc.NewClient(apiKey,
		contextsvc.WithBaseURL(baseURL),
		contextsvc.WithPlan(contextsvc.ProPlan()), // pace to 300/min, at most 49 at once
	)
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{
		Name:    "Release notes",
		Content: "# 1.0\n\nFirst release.",
		Tags:    []string{"release"},
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Contexts.Get(ctx, "ctx_missing")
	fmt.Println(c.Name, c.Version, errors.Is(err, contextsvc.ErrNotFound))
	// Output: Release notes 1 true
}

// Update sends only the fields that are set; every change is a version.
func ExampleContextsService_Update() {
	srv := exampleServer()
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{
		Name: "Runbook", Content: "# Deploy\n\nShip it.", Tags: []string{"ops"},
	})
	if err != nil {
		log.Fatal(err)
	}

	c, err = client.Contexts.Update(ctx, c.ID, &contextsvc.UpdateContextRequest{
		Content: contextsvc.Ptr("# Deploy\n\nShip it on Tuesdays."), // the name stays as it is
		Tags:    []string{},                                         // clears the tags; nil leaves them
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Name, c.Version, c.Tags)
	for v, err := range client.Contexts.AllVersions(ctx, c.ID, nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("version", v.Version, v.Changes.SectionsModified, v.Changes.WordCountDelta)
	}
	// Output:
	// Runbook 2 []
	// version 1 [Deploy] 3
	// version 2 [Deploy] 2
}

// Export streams the document with its content type and file name; the
// caller closes its Body.
func ExampleContextsService_Export() {
	srv := exampleServer()
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Release notes", Content: "# 1.0\n\nFirst *release*."})
	if err != nil {
		log.Fatal(err)
	}

	exp, err := client.Contexts.Export(ctx, c.ID, &contextsvc.ExportOptions{Format: contextsvc.ExportText})
	if err != nil {
		log.Fatal(err)
	}
	defer exp.Body.Close()
	text, err := io.ReadAll(exp.Body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(exp.ContentType, exp.Filename)
	fmt.Printf("%q\n", text)
	// Output:
	// text/plain; charset=utf-8 Release notes-v1.txt
	// "1.0\n\nFirst release.\n"
}

// NewRequest and Do send a request the SDK does not wrap, with the same
// authentication, pacing, retries and errors as its own operations.
func ExampleClient_Do() {
	srv := exampleServer()
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	req, err := client.NewRequest(ctx, http.MethodGet, "/contexts?limit=2", nil)
	if err != nil {
		log.Fatal(err)
	}
	var page contextsvc.ContextList
	if _, err := client.Do(ctx, req, &page); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(page.Data), page.HasMore)
	// Output: 2 true
}

// WithMaxResponseBytes bounds what the client reads of an answer; past the
// bound the call fails with ErrResponseTooLarge and reads no further.
func ExampleWithMaxResponseBytes() {
	// A server that answers without end, as a broken proxy might.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		filler := strings.Repeat(" ", 1<<10)
		for {
			if _, err := io.WriteString(w, filler); err != nil {
				return // the client has gone
			}
		}
	}))
	defer srv.Close()

	client, err := contextsvc.NewClient("sk_test_example",
		contextsvc.WithBaseURL(srv.URL+"/v1"),
		contextsvc.WithMaxResponseBytes(1<<20), // 1 MiB instead of the default 32 MiB
	)
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Contexts.Get(context.Background(), "ctx_1")
	fmt.Println(errors.Is(err, contextsvc.ErrResponseTooLarge))
	// Output: true
}

// Every call ends, whatever the server does. By default a call has 2
// minutes, its retries and the waits between them included; each attempt
// has 30 s to get the answer's headers, and each read of an answer's body
// 30 s to get bytes. A context's earlier deadline still ends a call sooner.
func ExampleWithCallTimeout() {
	srv := exampleServer()
	defer srv.Close()

	client, err := contextsvc.NewClient("sk_test_example",
		contextsvc.WithBaseURL(srv.URL+"/v1"),
		contextsvc.WithCallTimeout(30*time.Second),   // a whole call, retries and waits included
		contextsvc.WithHeaderTimeout(10*time.Second), // each attempt, until the answer's headers
		contextsvc.WithStallTimeout(10*time.Second),  // each read of an answer's body
	)
	if err != nil {
		log.Fatal(err)
	}
	page, err := client.Contexts.List(context.Background(), nil)
	if errors.Is(err, contextsvc.ErrTimeout) {
		log.Fatal("the service did not answer in time: ", err) // a bound of the client's
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(page.Data))
	// Output: 3
}

// An id goes into the request's path as one segment: one that would not
// (empty, "." or "..", with "/", "?", "#", "%" or ";", white space or a
// control character) is refused before anything is sent.
func ExampleContextsService_Get() {
	srv := exampleServer()
	defer srv.Close()
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}

	_, err = client.Contexts.Get(context.Background(), "../webhooks")
	fmt.Println(errors.Is(err, contextsvc.ErrInvalidArgument))
	fmt.Println(err)
	// Output:
	// true
	// contextsvc: invalid argument: context id "../webhooks": contains "/", a path separator
}
