package mockserver

// The admin API's own answers as a client decodes them, written apart
// from the server's types, so a change of a name or a field on the wire
// fails the tests that read them. What the admin API shows of the
// contract's objects (a context, a version, a diff, a webhook, an event,
// a delivery) is read into its one definition instead (adminapi's, held
// to model's wire types; mockserver's public types), as the /v1 answers
// are (model's wire types): there the validating wrapper holds every
// answer to openapi.yaml, and a test holds each shape to the definition.

// clockJSON is GET /_mock/clock.
type clockJSON struct {
	Now       string `json:"now"`
	Fake      bool   `json:"fake"`
	NextDueAt string `json:"nextDueAt,omitempty"`
}

// clockAdvanceJSON is POST /_mock/clock/advance.
type clockAdvanceJSON struct {
	clockJSON
	Attempts int `json:"attempts"`
}

// faultJSON is a fault of GET and POST /_mock/faults.
type faultJSON struct {
	Method     string `json:"method,omitempty"`
	Path       string `json:"path,omitempty"`
	Status     int    `json:"status,omitempty"`
	RetryAfter int    `json:"retryAfter,omitempty"`
	LatencyMs  int64  `json:"latencyMs,omitempty"`
	Times      int    `json:"times"`
	Mode       string `json:"mode,omitempty"`
}

// accountJSON is an account of GET /_mock/accounts.
type accountJSON struct {
	ID       string    `json:"id"`
	Users    []string  `json:"users"`
	Keys     []keyJSON `json:"keys"`
	Contexts int       `json:"contexts"`
	Webhooks int       `json:"webhooks"`
}

// keyJSON is a key of an account, its token masked.
type keyJSON struct {
	Token     string `json:"token"`
	User      string `json:"user"`
	Plan      Plan   `json:"plan"`
	Scope     Scope  `json:"scope"`
	PerMinute int    `json:"perMinute,omitempty"`
	Burst     int    `json:"burst,omitempty"`
}

// summaryJSON is GET /_mock/summary.
type summaryJSON struct {
	Accounts   int            `json:"accounts"`
	Contexts   int            `json:"contexts"`
	Webhooks   int            `json:"webhooks"`
	Events     int            `json:"events"`
	Deliveries DeliveryCounts `json:"deliveries"`
	Faults     int            `json:"faults"`
	Clock      clockJSON      `json:"clock"`
}
