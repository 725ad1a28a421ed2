// Package contextsvc is the Go SDK for the Context Management Service: a
// REST API for contexts (named Markdown documents with tags), their versions
// and exports, plus signed webhook notifications.
//
// This package holds the two parts a program that uses the service needs:
//
//   - The client for every /v1 operation (see [NewClient]), with bearer
//     authentication, 429-aware retries, plan-aware client-side rate limiting
//     ([WithPlan], [LocalLimiter]) and typed errors ([Error]). Every POST
//     carries an idempotency key, so it is retried safely like the other
//     methods; per-call options ([RequestOption]) set headers, keys, retries
//     and time-outs, and return the call's [Response].
//   - The webhook library for receivers: the event envelope and typed event
//     data ([Event]), the constant-time sha256= HMAC verifier
//     ([VerifySignature]) and a verifying [net/http.Handler]
//     ([NewWebhookHandler]) with replay protection and deduplication
//     ([Deduper]).
//
// Two hooks let other code observe both: [Middleware] ([WithMiddleware],
// [WithRequestMiddleware]) sees each call once around its attempts, each
// attempt and each wait; [WithDeliveryHook] hears how the webhook handler
// answered each request. Package contextsvcotel builds OpenTelemetry traces
// and metrics on them; this package does not import OpenTelemetry.
//
// The module's other parts build on it: package mockserver is an
// in-memory implementation of the whole API, with signed webhook
// deliveries, a fake clock, faults, an admin API and a live dashboard, for
// tests and local development (and the command contextsvc-mock); package
// redisstore shares the rate limit of one key and the record of handled
// events through Redis, for fleets of clients and replicas of a receiver;
// the command contextsvc-conform checks any deployment of the service
// against the contract this SDK and its mock follow.
//
// The repository's README is the front page, and its docs/ directory has a
// guide for each part: client.md, webhooks.md, mockserver.md,
// dashboard.md, fleet.md, observability.md and conformance.md.
//
// The module follows semantic versioning ([SDKVersion]); its exported API is
// recorded in the repository's api/ directory and checked by its tests.
package contextsvc
