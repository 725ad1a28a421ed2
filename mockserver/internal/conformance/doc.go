// Package conformance checks a deployment of the Context Management
// Service against the project's API contract: the engine of the command
// contextsvc-conform. A team that tests against the mock server learns
// from it whether its real service (or staging) behaves as the mock does,
// and where it does not, whether the SDK tolerates the difference.
//
// [Run] first makes sure the server answers at all: when it cannot be
// reached, the [Report] says why ([Unreachable]) and no check runs.
// Otherwise it sends the contract's requests to the server ([Config]: base
// URL, API key) and returns a [Report]: each check passed, failed (each
// [Difference] with the request, what the contract says, what came back
// and where the answer breaks the OpenAPI document) or skipped, then the
// SDK tolerance list, decided by replaying each answer through the SDK's
// own methods (package internal/contract). The checks cover every /v1
// operation; the error body and status of each error case the contract
// defines that one request can provoke (internal/contract's ErrorCases);
// X-Request-Id and the rate-limit headers on every answer; paging; update
// merging; versions; every export format (a PDF's text read back with
// pdftotext); idempotency keys; and, with a receiver the server can reach,
// webhook deliveries (the SDK verifies each signature), their headers and
// data, the events each change fires, and the retry of a failed attempt.
//
// The run never touches what it did not create. Everything it creates is
// named after the run (contexts: [NamePrefix] + run id + a role, tagged
// NamePrefix + run id; the webhook's url carries the run id) and is
// deleted at the end, also after an interruption; a webhook cannot be
// (the /v1 API has no delete) and is reported in [Report].LeftBehind.
// Config.ReadOnly runs only the checks that create nothing, even on a
// server that does not follow the contract. Every request waits for
// Config.Limiter (the SDK's limiter for the key's plan), so the run stays
// within the plan; only the opt-in 429 check spends the bucket on purpose.
// API keys and the webhook secret never appear in the report or the
// progress lines, nor do the values of the receiver URL's query.
package conformance
