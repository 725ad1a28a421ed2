package model

import "time"

// ContractMismatch is one way a request or an answer breaks the OpenAPI
// document, as the validating proxy found it: mockserver.ContractMismatch.
type ContractMismatch struct {
	// Where is the part: "status", "header X-Request-Id", "body /data/0/id",
	// "query limit".
	Where string
	// Rule is where in the document the rule broken is, as a JSON pointer
	// with the schema keyword last ("#/components/schemas/Context/required").
	Rule string
	// Message says how it breaks the rule.
	Message string
}

// ContractFinding is one exchange the validating proxy found breaking the
// document, or could not hold to it: mockserver.ContractFinding. Secrets
// are masked in every field.
type ContractFinding struct {
	// ID names it in the admin API ("cm_…").
	ID string
	// Time is when the answer ended, on the server's clock.
	Time time.Time
	// Method and Target are the request's (its path and query).
	Method, Target string
	// Operation is the document's operation id, or "off the API".
	Operation string
	// Status is the upstream's status (502 when it did not answer, 504
	// when it did not begin its answer within the time-out).
	Status int
	// RequestID is the upstream's X-Request-Id.
	RequestID string
	// Request and Answer list how each breaks the document (a request
	// only when the upstream did not refuse it with a 4xx).
	Request, Answer []ContractMismatch
	// Dropped counts the mismatches past 50 a side not listed.
	Dropped int
	// SDKTolerates, when the answer breaks the document, says whether the
	// SDK tolerates it, and SDK what its method made of it.
	SDKTolerates *bool
	SDK          string
	// Unvalidated says why the exchange, or part of it, was not held to
	// the document.
	Unvalidated string
}

// ContractCount is what the validating proxy saw of one operation:
// mockserver.ContractCount.
type ContractCount struct {
	// Operation is the document's operation id, or "off the API".
	Operation string
	// Exchanges counts the requests forwarded (and those the upstream did
	// not answer).
	Exchanges int
	// Mismatched counts the exchanges that broke the document, and
	// Mismatches their mismatches, request and answer.
	Mismatched, Mismatches int
	// NotTolerated counts the answers the SDK does not tolerate.
	NotTolerated int
	// Refused counts the requests that broke the document and that the
	// upstream refused with a 4xx, as it must: not a mismatch.
	Refused int
	// Unvalidated counts the exchanges with a body over
	// MaxValidatedBody, or cut short: held to the document in part or not
	// at all.
	Unvalidated int
	// UpstreamFailures counts the requests the upstream did not answer
	// (the proxy answered 502), or did not begin to in time (504).
	UpstreamFailures int
}
