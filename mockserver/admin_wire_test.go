package mockserver

import contextsvc "github.com/contextsvc/contextsvc-go"

// The admin API's answers as a client decodes them. The tests read the
// answers into these, written apart from the server's own types, so a
// change of a name or a field on the wire fails them.

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

// adminContextJSON is a context of GET /_mock/contexts (and, with its
// content, GET /_mock/contexts/{id}).
type adminContextJSON struct {
	ID        string   `json:"id"`
	Account   string   `json:"account"`
	Name      string   `json:"name"`
	Tags      []string `json:"tags"`
	Version   int      `json:"version"`
	SizeBytes int      `json:"sizeBytes"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
	Content   *string  `json:"content,omitempty"`
}

// adminVersionJSON is a version of GET /_mock/contexts/{id}/versions.
type adminVersionJSON struct {
	ContextID string             `json:"contextId"`
	Version   int                `json:"version"`
	Name      string             `json:"name"`
	Tags      []string           `json:"tags"`
	SizeBytes int                `json:"sizeBytes"`
	CreatedAt string             `json:"createdAt"`
	CreatedBy string             `json:"createdBy"`
	Changes   contextsvc.Changes `json:"changes"`
}

// diffJSON is GET /_mock/contexts/{id}/diff.
type diffJSON struct {
	ContextID      string         `json:"contextId"`
	From           int            `json:"from"`
	To             int            `json:"to"`
	FromName       string         `json:"fromName"`
	ToName         string         `json:"toName"`
	FromTags       []string       `json:"fromTags"`
	ToTags         []string       `json:"toTags"`
	Identical      bool           `json:"identical"`
	TooDifferent   bool           `json:"tooDifferent"`
	Added          int            `json:"added"`
	Removed        int            `json:"removed"`
	Hunks          []diffHunkJSON `json:"hunks"`
	HunksLeftOut   int            `json:"hunksLeftOut,omitempty"`
	FromContent    *string        `json:"fromContent,omitempty"`
	ToContent      *string        `json:"toContent,omitempty"`
	FromContentCut int            `json:"fromContentCut,omitempty"`
	ToContentCut   int            `json:"toContentCut,omitempty"`
}

type diffHunkJSON struct {
	FromStart    int            `json:"fromStart"`
	FromLines    int            `json:"fromLines"`
	ToStart      int            `json:"toStart"`
	ToLines      int            `json:"toLines"`
	Lines        []diffLineJSON `json:"lines"`
	LinesLeftOut int            `json:"linesLeftOut,omitempty"`
}

type diffLineJSON struct {
	Op        string `json:"op"`
	Text      string `json:"text"`
	NoNewline bool   `json:"noNewline,omitempty"`
	Cut       int    `json:"cut,omitempty"`
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
