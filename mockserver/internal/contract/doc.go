// Package contract describes the API contract of the Context Management
// Service in one place, for everything in this module that holds a server
// to it: the conformance runner (cmd/contextsvc-conform, package
// internal/conformance), the mock server's tests, and the mock's validating
// proxy.
//
// It holds three things:
//
//   - The contract's tables: the /v1 operations ([Operations]), the error
//     types and their statuses ([ErrorTypes]), the error cases a client can
//     provoke and how ([ErrorCases]), the export formats and their content
//     types ([ExportFormats]), the event types, what fires them and their
//     schemas ([Events]), the headers, id prefixes, limits and the retry
//     schedule. The decisions behind them are in the project's
//     api-contract document; the mock server implements them exactly.
//   - [Spec], the OpenAPI document (mockserver/openapi.yaml) loaded with
//     kin-openapi, which checks a recorded request and its answer
//     ([Exchange]; [Spec.CheckRequest], [Spec.CheckResponse]) or a
//     delivered event against it and says, for each [Mismatch], where in
//     the document it breaks it.
//   - [ReadAnswer] and [ReadDelivery], which replay a recorded answer
//     through the SDK's own method (Contexts.List, Contexts.Delete,
//     ConstructEvent…), and [Judge], which says from that [Reading] whether
//     the SDK tolerates an answer that differs from the contract: the
//     contract's "SDK tolerance" section, decided by running the SDK rather
//     than by a list kept by hand.
//
// The package does not import the mock server: the mock (and its proxy)
// may import it, and the document comes in as bytes ([LoadSpec]).
package contract
