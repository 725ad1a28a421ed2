package mockserver

import (
	"net/http"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/proxy"
)

// This file is the validating proxy's options and wiring: the forwarding
// and the checks are the proxy package's; the admin API lists what it
// finds (GET /_mock/contract…), and the dashboard's Contract view shows
// it.

// MaxValidatedBody bounds what the validating proxy ([WithUpstream])
// buffers of each body, a request's and an answer's, to hold it to the
// OpenAPI document (8 MiB). A larger body streams on as it is, and its
// exchange is counted as unvalidated.
const MaxValidatedBody = proxy.MaxValidatedBody

// MaxContractBytes bounds the validating proxy's kept findings in bytes
// (16 MiB), besides [WithHistoryLimit]'s count: past either, the oldest
// go first. The counts per operation cover every exchange.
const MaxContractBytes = proxy.MaxBytes

// WithUpstream makes the server a validating proxy: every /v1 request is
// forwarded to baseURL (a deployment of the service, ending in /v1 as
// CONTEXTSVC_BASE_URL does: "https://staging.example.com/v1") with its
// headers as they are, the caller's Authorization included, and the
// upstream's answer streams back. The request and the answer are held to
// [OpenAPI], the contract's document: each mismatch is logged (at Warn,
// with the rule of the document it breaks), kept (see
// [Server.ContractFindings], GET /_mock/contract/mismatches and the
// dashboard's Contract view) and counted per operation
// ([Server.ContractCounts], GET /_mock/contract), and each answer that
// breaks the document is replayed through the SDK's own method to say
// whether the SDK tolerates it. A request the document forbids that the
// upstream refuses with a 4xx is the contract at work, counted as refused.
//
// The API key in Authorization, a webhook's secret, the secrets of a
// receiver's URL and the values of the query's parameters named as
// secrets (api_key, token, sig, …) are never logged, kept or shown: they
// are masked by where they are, never by looking for their text, so no
// other word of a finding is touched. At most [MaxValidatedBody] of each
// body is buffered. An upstream that does not answer gets the caller a
// 502 with the contract's error body, and one that does not begin its
// answer in time ([WithUpstreamTimeout]) a 504.
//
// A proxy serves no /v1 of its own: its keys ([WithKey]), faults, rate
// limits and the events its /v1 would fire do not apply to the forwarded
// requests, and [WithStateFile] is refused. The admin routes, with their
// Host, cross-site and credentials checks, serve as ever. A baseURL that
// is not http or https, has no host, does not end in /v1, or carries
// credentials, a query or a fragment, makes Open return an error wrapping
// [ErrInvalidOption] (one that never shows the URL's credentials).
func WithUpstream(baseURL string) Option {
	return func(cf *config) error {
		u, err := proxy.ParseUpstream(baseURL)
		if err != nil {
			return invalidOption("WithUpstream: %s", err.Error())
		}
		cf.upstream = u.String()
		return nil
	}
}

// WithUpstreamTransport sends [WithUpstream]'s requests with rt (an
// httptest TLS server's client's Transport, a transport with a proxy or
// client certificates of its own); the default is a clone of
// http.DefaultTransport. nil is an error.
func WithUpstreamTransport(rt http.RoundTripper) Option {
	return func(cf *config) error {
		if rt == nil {
			return invalidOption("WithUpstreamTransport(nil)")
		}
		cf.upstreamTransport = rt
		return nil
	}
}

// DefaultUpstreamTimeout is how long, by default, the validating proxy
// ([WithUpstream]) waits for the upstream to begin its answer
// ([WithUpstreamTimeout]), and DefaultUpstreamIdleTimeout how long for
// more of an answer's body once it has begun ([WithUpstreamIdleTimeout]).
const (
	DefaultUpstreamTimeout     = proxy.DefaultTimeout
	DefaultUpstreamIdleTimeout = proxy.DefaultIdleTimeout
)

// WithUpstreamTimeout bounds the time [WithUpstream]'s upstream has to
// begin its answer: from the moment a request is forwarded (its body
// streaming meanwhile) to the answer's headers and the first bytes of its
// body (or its end), which go to the caller together. Past it the caller
// gets a 504 with the contract's error body (type unavailable), and a
// finding and a log line (Warn) say the time-out was passed. The default
// is [DefaultUpstreamTimeout] (60 s); it must be positive. It is real
// time, whatever the server's clock.
func WithUpstreamTimeout(d time.Duration) Option {
	return positive("WithUpstreamTimeout", d, func(cf *config) *time.Duration { return &cf.upstreamTimeout })
}

// WithUpstreamIdleTimeout bounds each wait for more of an answer's body
// once it has begun ([WithUpstreamTimeout]): an upstream that sends
// nothing for that long has its answer cut short (the caller, which has
// its status, sees the connection closed before the body's end), and a
// finding and a log line (Warn) say so. A body that keeps coming streams
// on as long as the caller reads it. The default is
// [DefaultUpstreamIdleTimeout] (30 s); it must be positive.
func WithUpstreamIdleTimeout(d time.Duration) Option {
	return positive("WithUpstreamIdleTimeout", d, func(cf *config) *time.Duration { return &cf.upstreamIdle })
}

// newProxy makes the validating proxy of cf.upstream, whose findings it
// tells hub of.
func newProxy(cf *config, hub *changes.Hub) (*proxy.Proxy, error) {
	if cf.stateFile != "" {
		return nil, invalidOption("WithUpstream with WithStateFile: a proxy keeps no state of its own")
	}
	spec, err := contract.LoadSpec(openAPIDocument)
	if err != nil {
		return nil, err
	}
	u, err := proxy.ParseUpstream(cf.upstream)
	if err != nil {
		return nil, invalidOption("WithUpstream: %s", err.Error())
	}
	return proxy.New(proxy.Config{
		Upstream: u, Spec: spec, Transport: cf.upstreamTransport, Now: cf.clock.Now, Logger: cf.logger,
		Log:     proxy.NewLog(cf.historyLimit, proxy.MaxBytes),
		Timeout: cf.upstreamTimeout, IdleTimeout: cf.upstreamIdle,
		OnFinding: func(f *proxy.Finding) {
			hub.Publish(changes.Change{Kind: changes.KindContract, ID: f.ID, Action: "added"})
		},
	}), nil
}

// ContractMismatch is one way a request or an answer breaks the OpenAPI
// document, as the validating proxy ([WithUpstream]) found it: Where (the
// part: "status", "header X-Request-Id", "body /data/0/id", "query
// limit"), Rule (where in the document the rule broken is, as a JSON
// pointer with the schema keyword last) and Message. Its fields are
// documented with its definition, [model.ContractMismatch].
type ContractMismatch = model.ContractMismatch

// ContractFinding is one exchange the validating proxy found breaking the
// document, or could not hold to it: its ID ("cm_…"), Time, the request's
// Method and Target, its Operation, the upstream's Status and RequestID,
// how the Request and the Answer break the document (Dropped counts those
// past 50 a side), whether the SDK tolerates the answer (SDKTolerates,
// SDK) and why it was not held to the document, if so (Unvalidated).
// Secrets are masked in every field. Its fields are documented with its
// definition, [model.ContractFinding].
type ContractFinding = model.ContractFinding

// ContractCount is what the validating proxy saw of one operation: the
// exchanges forwarded, those that broke the document and their
// mismatches, the answers the SDK does not tolerate, the requests refused
// as they must be, the exchanges not validated and the requests the
// upstream did not answer. Its fields are documented with its definition,
// [model.ContractCount].
type ContractCount = model.ContractCount
