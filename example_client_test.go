package contextsvc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// exampleServer stands in for the service in these examples: it answers
// create, get and list the way the service does, for three stored contexts.
// Real code points the client at the service (or at the mockserver package).
func exampleServer() *httptest.Server {
	stored := []map[string]any{
		{"id": "ctx_a", "name": "Onboarding", "content": "", "tags": []string{}, "version": 1},
		{"id": "ctx_b", "name": "Runbook", "content": "", "tags": []string{}, "version": 3},
		{"id": "ctx_c", "name": "Glossary", "content": "", "tags": []string{}, "version": 2},
	}
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_example")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("POST /v1/contexts", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		in["id"], in["version"] = "ctx_new", 1
		writeJSON(w, http.StatusCreated, in)
	})
	mux.HandleFunc("GET /v1/contexts", func(w http.ResponseWriter, r *http.Request) {
		start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		end := min(start+2, len(stored))
		page := map[string]any{"data": stored[start:end], "hasMore": end < len(stored), "nextCursor": nil}
		if end < len(stored) {
			page["nextCursor"] = strconv.Itoa(end)
		}
		writeJSON(w, http.StatusOK, page)
	})
	mux.HandleFunc("GET /v1/contexts/{id}", func(w http.ResponseWriter, r *http.Request) {
		for _, c := range stored {
			if c["id"] == r.PathValue("id") {
				writeJSON(w, http.StatusOK, c)
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"type": "not_found", "message": fmt.Sprintf("no such context %q", r.PathValue("id")), "requestId": "req_example",
		}})
	})
	return httptest.NewServer(mux)
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
	fmt.Println(c.ID, c.Name, c.Version, c.Tags)
	// Output: ctx_new Release notes 1 [release]
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
		fmt.Println(c.ID, c.Name)
	}
	// Output:
	// ctx_a Onboarding
	// ctx_b Runbook
	// ctx_c Glossary
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
		fmt.Println(apiErr.StatusCode, apiErr.Type, apiErr.RequestID)
	}
	fmt.Println(err)
	// Output:
	// not found
	// 404 not_found req_example
	// contextsvc: 404 not_found: no such context "ctx_missing" (request req_example)
}
