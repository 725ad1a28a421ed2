// Package mockserver is an in-memory reference implementation of the
// Context Management Service's /v1 API, for tests and local development.
//
// It follows the project's API contract exactly (shapes, statuses, headers,
// validation, error bodies), states all of it in its embedded OpenAPI
// document ([OpenAPI], served at GET /_mock/openapi.yaml), and sends real,
// signed webhook deliveries on the service's retry schedule, on a clock a
// test controls ([FakeClock]). In a test, two lines give a running server
// and a client pointed at it; the server's Go methods show what it holds:
//
//	func TestRunbook(t *testing.T) {
//		ts := mockserver.NewTestServer(t)
//		client, err := contextsvc.NewClient(ts.APIKey, contextsvc.WithBaseURL(ts.URL))
//		if err != nil {
//			t.Fatal(err)
//		}
//		created, err := client.Contexts.Create(t.Context(), &contextsvc.CreateContextRequest{Name: "Runbook"})
//		if err != nil {
//			t.Fatal(err)
//		}
//		if stored, ok := ts.Context(created.ID); !ok || stored.Version != 1 {
//			t.Errorf("stored %+v", stored)
//		}
//	}
//
// Besides the API it has keys on the service's plans and accounts
// ([Key]), faults ([Fault]), idempotency keys, a state file that survives
// a restart ([WithStateFile]), an admin API under /_mock/ with a live
// dashboard, a validating proxy to a real deployment ([WithUpstream]),
// OpenTelemetry tracing ([WithTracerProvider]) and bounds on everything
// it keeps; the command contextsvc-mock runs it on its own.
//
// The guides in the repository's docs/ directory say how to use each of
// them: mockserver.md (tests, the fake clock and deliveries, faults,
// idempotency keys, keys and accounts, webhooks, the state file and its
// document, the command, the admin API and who may reach it, the bounds,
// and the decisions the mock makes where the contract leaves room),
// dashboard.md, observability.md ("The mock server": its spans and
// metrics), conformance.md (the validating proxy) and
// mockserver-architecture.md (how the package is built, for those who
// change it).
package mockserver
