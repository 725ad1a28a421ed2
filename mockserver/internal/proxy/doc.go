// Package proxy is the mock server's validating proxy: in front of an
// upstream (a real deployment of the Context Management Service, a
// staging one, another mock), it forwards each /v1 request to it as it
// is, the caller's Authorization included, streams the answer back, and
// holds the request and the answer to the OpenAPI document
// (internal/contract's Spec). Every mismatch is logged with the rule of
// the document it breaks, and kept in a [Log] bounded in entries and
// bytes, with counts per operation; each answer that breaks the document
// is replayed through the SDK's own method (contract.ReadAnswer) to say
// whether the SDK tolerates it (contract.Judge).
//
// It owns the forwarding, what it buffers to validate (at most
// [MaxValidatedBody] of each body: past it the body streams on
// unvalidated, and is counted so), the findings and their bounds, and
// keeping secrets out of them: the Authorization header, a webhook's
// secret and the secrets a receiver URL carries are never logged, kept
// or shown. It imports nothing of the mock server but the shared parts
// below it (httpapi for the contract's error body, page and queue for the
// bounded list); the admin API reads its Log.
package proxy
