package contract

import (
	"net/http"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Operation is one /v1 operation of the contract.
type Operation struct {
	// ID is the operationId in the OpenAPI document, e.g. "listContexts".
	ID string
	// Method and Path are as the document writes them
	// ("/v1/contexts/{id}").
	Method, Path string
	// Success is the status of a successful answer.
	Success int
	// Write tells whether the operation needs a key of write scope (a
	// read-scope key gets a 403).
	Write bool
}

// The operation ids of the /v1 API.
const (
	OpListContexts    = "listContexts"
	OpGetContext      = "getContext"
	OpCreateContext   = "createContext"
	OpUpdateContext   = "updateContext"
	OpDeleteContext   = "deleteContext"
	OpListVersions    = "listVersions"
	OpExportContext   = "exportContext"
	OpRegisterWebhook = "registerWebhook"
)

// Operations returns every /v1 operation, in the reference's order. Each
// call returns a new slice.
func Operations() []Operation {
	return []Operation{
		{OpListContexts, http.MethodGet, "/v1/contexts", http.StatusOK, false},
		{OpGetContext, http.MethodGet, "/v1/contexts/{id}", http.StatusOK, false},
		{OpCreateContext, http.MethodPost, "/v1/contexts", http.StatusCreated, true},
		{OpUpdateContext, http.MethodPut, "/v1/contexts/{id}", http.StatusOK, true},
		{OpDeleteContext, http.MethodDelete, "/v1/contexts/{id}", http.StatusOK, true},
		{OpListVersions, http.MethodGet, "/v1/contexts/{id}/versions", http.StatusOK, false},
		{OpExportContext, http.MethodGet, "/v1/contexts/{id}/export", http.StatusOK, false},
		{OpRegisterWebhook, http.MethodPost, "/v1/webhooks", http.StatusCreated, true},
	}
}

// ErrorType is one error type of the contract and the status it comes
// with.
type ErrorType struct {
	Status int
	Type   string
}

// The error types of the contract's error body
// {"error":{"type","message","param","requestId"}}.
const (
	TypeInvalidRequest   = "invalid_request"
	TypeUnauthorized     = "unauthorized"
	TypeForbidden        = "forbidden"
	TypeNotFound         = "not_found"
	TypeMethodNotAllowed = "method_not_allowed"
	TypeConflict         = "conflict"
	TypePayloadTooLarge  = "payload_too_large"
	TypeRateLimited      = "rate_limited"
	TypeInternal         = "internal"
)

// ErrorTypes returns the contract's error types by status, ascending. Each
// call returns a new slice.
func ErrorTypes() []ErrorType {
	return []ErrorType{
		{http.StatusBadRequest, TypeInvalidRequest},
		{http.StatusUnauthorized, TypeUnauthorized},
		{http.StatusForbidden, TypeForbidden},
		{http.StatusNotFound, TypeNotFound},
		{http.StatusMethodNotAllowed, TypeMethodNotAllowed},
		{http.StatusConflict, TypeConflict},
		{http.StatusRequestEntityTooLarge, TypePayloadTooLarge},
		{http.StatusTooManyRequests, TypeRateLimited},
		{http.StatusInternalServerError, TypeInternal},
	}
}

// ErrorTypeOf returns the contract's error type for status, or "" when the
// contract has none.
func ErrorTypeOf(status int) string {
	for _, e := range ErrorTypes() {
		if e.Status == status {
			return e.Type
		}
	}
	return ""
}

// Headers of the API and of webhook deliveries.
const (
	HeaderRequestID          = "X-Request-Id"
	HeaderRateLimitLimit     = "X-RateLimit-Limit"
	HeaderRateLimitRemaining = "X-RateLimit-Remaining"
	HeaderRateLimitReset     = "X-RateLimit-Reset"
	HeaderRetryAfter         = "Retry-After"
	HeaderWWWAuthenticate    = "WWW-Authenticate"
	HeaderAllow              = "Allow"
	HeaderIdempotencyKey     = "Idempotency-Key"
	HeaderIdempotentReplayed = "Idempotent-Replayed"
	HeaderContentDisposition = "Content-Disposition"

	HeaderSignature       = contextsvc.DefaultSignatureHeader // X-Service-Signature
	HeaderEvent           = "X-Service-Event"
	HeaderDelivery        = "X-Service-Delivery"
	HeaderDeliveryAttempt = "X-Service-Delivery-Attempt"
)

// RateLimitHeaders returns the three rate-limit headers every
// authenticated answer of a rate-limited key carries.
func RateLimitHeaders() []string {
	return []string{HeaderRateLimitLimit, HeaderRateLimitRemaining, HeaderRateLimitReset}
}

// The id prefixes; after the prefix come at least 20 random characters.
const (
	PrefixContext  = "ctx_"
	PrefixWebhook  = "wh_"
	PrefixEvent    = "evt_"
	PrefixDelivery = "dlv_"
	PrefixExport   = "exp_"
	PrefixUser     = "user_"
	PrefixRequest  = "req_"
)

// The contract's limits.
const (
	MaxBodyBytes      = 2 << 20 // a request body over it is a 413
	MaxNameRunes      = 200
	MaxContentBytes   = 1_000_000
	MaxTags           = 20
	MaxTagRunes       = 50
	MaxSecretRunes    = 256
	MinListLimit      = 1
	MaxListLimit      = 100
	DefaultListLimit  = 20
	MaxIdempotencyKey = 255
)

// RetrySchedule returns the delays between webhook delivery attempts:
// after the k-th failed attempt the next comes the k-th delay later, so a
// delivery gets at most 6 attempts. Each call returns a new slice.
func RetrySchedule() []time.Duration {
	return []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 24 * time.Hour}
}

// ExportFormat is one format of exportContext.
type ExportFormat struct {
	// Name is the canonical name, the one export.completed reports.
	Name string
	// Aliases are other values of the format parameter that select it.
	Aliases []string
	// ContentType is the answer's exact Content-Type.
	ContentType string
	// Ext is the file name's extension in Content-Disposition.
	Ext string
}

// DefaultExportFormat is the format of an export without a format
// parameter.
const DefaultExportFormat = "markdown"

// ExportFormats returns the export formats, in the contract's order. Each
// call returns new slices.
func ExportFormats() []ExportFormat {
	return []ExportFormat{
		{Name: "markdown", Aliases: []string{"md"}, ContentType: "text/markdown; charset=utf-8", Ext: "md"},
		{Name: "html", ContentType: "text/html; charset=utf-8", Ext: "html"},
		{Name: "text", Aliases: []string{"txt"}, ContentType: "text/plain; charset=utf-8", Ext: "txt"},
		{Name: "json", ContentType: "application/json", Ext: "json"},
		{Name: "pdf", ContentType: "application/pdf", Ext: "pdf"},
	}
}

// Event is one event type of the contract.
type Event struct {
	// Type is the event type.
	Type contextsvc.EventType
	// Schema names the schema of the whole envelope under
	// components/schemas in the OpenAPI document (its data's fields are
	// there).
	Schema string
	// FiredBy lists the /v1 operations that fire the event; none for the
	// events only the mock's admin actions fire (no /v1 endpoint does).
	FiredBy []string
}

// Events returns every event type, in the reference's order. Each call
// returns new slices.
func Events() []Event {
	return []Event{
		{contextsvc.EventContextCreated, "ContextCreatedEvent", []string{OpCreateContext}},
		{contextsvc.EventContextUpdated, "ContextUpdatedEvent", []string{OpUpdateContext}},
		{contextsvc.EventContextDeleted, "ContextDeletedEvent", []string{OpDeleteContext}},
		{contextsvc.EventContextPublished, "ContextPublishedEvent", nil},
		{contextsvc.EventContextVersionCreated, "ContextVersionCreatedEvent", []string{OpCreateContext, OpUpdateContext}},
		{contextsvc.EventTeamMemberAdded, "TeamMemberAddedEvent", nil},
		{contextsvc.EventTeamMemberRemoved, "TeamMemberRemovedEvent", nil},
		{contextsvc.EventExportCompleted, "ExportCompletedEvent", []string{OpExportContext}},
	}
}

// EventOf returns the contract's entry for an event type, and whether it
// has one.
func EventOf(t contextsvc.EventType) (Event, bool) {
	for _, e := range Events() {
		if e.Type == t {
			return e, true
		}
	}
	return Event{}, false
}
