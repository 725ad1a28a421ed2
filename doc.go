// Package contextsvc is the Go SDK for the Context Management Service: a
// REST API for contexts (named Markdown documents with tags), their versions
// and exports, plus signed webhook notifications.
//
// The package has two parts:
//
//   - A typed client for every /v1 operation (see [NewClient]), with bearer
//     authentication, 429-aware retries, plan-aware client-side rate limiting
//     and typed errors ([Error]). Every POST carries an idempotency key, so
//     it is retried safely like the other methods; per-call options
//     ([RequestOption]) set headers, keys, retries and time-outs, and
//     return the call's [Response].
//   - A webhook library for receivers: the event envelope and typed event
//     data ([Event]), the constant-time sha256= HMAC verifier
//     ([VerifySignature]) and a verifying [net/http.Handler]
//     ([NewWebhookHandler]).
//
// Two hooks let other code observe both: [Middleware] ([WithMiddleware],
// [WithRequestMiddleware]) sees each call once around its attempts, each
// attempt and each wait; [WithDeliveryHook] hears how the webhook handler
// answered each request. Package contextsvcotel builds OpenTelemetry traces
// and metrics on them; this package does not import OpenTelemetry.
//
// The package mockserver holds an in-memory implementation of the whole API
// for tests.
package contextsvc
