package contextsvc_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// exampleServer starts the bundled mock server (the real API, in memory)
// with the key these examples use and three stored contexts. Real code
// points the client at the service.
func exampleServer() *httptest.Server {
	srv := httptest.NewServer(mockserver.New(mockserver.WithKey(mockserver.Key{Token: "sk_test_example"})))
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"Onboarding", "Runbook", "Glossary"} {
		if _, err := client.Contexts.Create(context.Background(), &contextsvc.CreateContextRequest{Name: name}); err != nil {
			log.Fatal(err)
		}
	}
	return srv
}

func ExampleNewClient() {
	// An empty key would fall back to CONTEXTSVC_API_KEY, a missing
	// WithBaseURL to CONTEXTSVC_BASE_URL.
	client, err := contextsvc.NewClient("sk_live_do_not_print",
		contextsvc.WithBaseURL("https://api.example.com/v1"),
		contextsvc.WithPlan(contextsvc.PlanPro), // pace to 300/min, burst 50
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
	srv := exampleServer()
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
