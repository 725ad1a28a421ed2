package mockserver_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// A validating proxy in front of a deployment (here another mock server,
// standing in for staging): the SDK talks to the proxy with the
// deployment's key, and the proxy holds every exchange to the contract.
func ExampleWithUpstream() {
	staging := httptest.NewServer(mockserver.New(mockserver.WithKey(mockserver.Key{Token: "sk_staging", Plan: mockserver.PlanPro})))
	defer staging.Close()

	proxy := mockserver.New(mockserver.WithUpstream(staging.URL + "/v1"))
	hs := httptest.NewServer(proxy)
	defer hs.Close()

	client, err := contextsvc.NewClient("sk_staging", contextsvc.WithBaseURL(hs.URL+"/v1"))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Runbook"})
	if err != nil {
		panic(err)
	}
	if _, err := client.Contexts.Get(ctx, "ctx_missing"); err != nil {
		fmt.Println("get:", err.(*contextsvc.Error).StatusCode)
	}
	if _, err := client.Contexts.Delete(ctx, c.ID); err != nil {
		panic(err)
	}
	// An exchange is checked as its answer's last bytes go out.
	if err := proxy.WaitIdle(ctx); err != nil {
		panic(err)
	}
	for _, n := range proxy.ContractCounts() {
		fmt.Printf("%s: %d exchanges, %d mismatched\n", n.Operation, n.Exchanges, n.Mismatched)
	}
	for _, f := range proxy.ContractFindings() {
		fmt.Println(f.Method, f.Target, f.Request, f.Answer, f.SDK)
	}
	fmt.Println("findings:", len(proxy.ContractFindings()))
	// Output:
	// get: 404
	// createContext: 1 exchanges, 0 mismatched
	// deleteContext: 1 exchanges, 0 mismatched
	// getContext: 1 exchanges, 0 mismatched
	// findings: 0
}
