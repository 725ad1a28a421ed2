package contract

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Auth is the credentials an [ErrorCase]'s request carries.
type Auth int

// The credentials of a request.
const (
	AuthKey     Auth = iota // the caller's key, as Bearer
	AuthNone                // no Authorization header
	AuthBasic               // a Basic scheme (no key in it)
	AuthUnknown             // Bearer with a key no server issued
	AuthReadKey             // a key of read scope, as Bearer
)

// Subject is what an [ErrorCase]'s request addresses.
type Subject int

// The subjects of a request.
const (
	// SubjectNone: the path names no context.
	SubjectNone Subject = iota
	// SubjectMissing: the path names a context id that does not exist
	// ({id} is one nobody created).
	SubjectMissing
	// SubjectOwn: the path names a context the caller created for the
	// purpose ({id} is its id).
	SubjectOwn
)

// Values fill in an [ErrorCase]'s request.
type Values struct {
	// ID is the context id of the path's {id}.
	ID string
	// Name is a context name that marks what the request would create,
	// were a server to accept it.
	Name string
	// Tag is a tag that marks what the request would create.
	Tag string
	// WebhookURL is the https url of a webhook registration the case
	// expects to be refused.
	WebhookURL string
	// Secret is a webhook signing secret for the same.
	Secret string
}

// ErrorCase is one error the contract defines, with a request that
// provokes it. Every request a case sends either creates nothing on a
// server that follows the contract or, on one that does not, creates
// something named after [Values] (Name, Tag), so its creator can find and
// delete it.
type ErrorCase struct {
	// Name says what is wrong with the request, e.g. "an unknown field".
	Name string
	// Operation is the operation id the request addresses; "" for a path
	// the API does not have.
	Operation string
	// Method and Path are the request's; Path is relative to the base URL
	// (".../v1"), starts with "/", and may hold {id} and a query.
	Method, Path string
	// Subject is what {id} names.
	Subject Subject
	// Auth is the credentials the request carries.
	Auth Auth
	// Body, when not nil, makes the JSON request body from the values.
	Body func(Values) []byte
	// Header holds extra request headers.
	Header map[string]string

	// Status, Type and Param are what the contract answers: the status,
	// the error body's type, and its param ("" when the contract names no
	// field).
	Status int
	Type   string
	Param  string

	// Safe tells whether the request creates nothing even on a server that
	// does not follow the contract (a read, or a write to a missing id
	// that cannot create it), so a read-only run may send it.
	Safe bool
}

// jsonBody makes a Body from a value whose strings may hold the
// placeholders {name}, {tag}, {url} and {secret}.
func jsonBody(v any) func(Values) []byte {
	return func(vals Values) []byte {
		b, _ := json.Marshal(fill(v, vals))
		return b
	}
}

// fill replaces the placeholders in the strings of v (a JSON-like value of
// maps, slices and strings).
func fill(v any, vals Values) any {
	switch x := v.(type) {
	case string:
		return strings.NewReplacer("{name}", vals.Name, "{tag}", vals.Tag, "{url}", vals.WebhookURL, "{secret}", vals.Secret).Replace(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fill(e, vals)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = fill(e, vals)
		}
		return out
	}
	return v
}

// rawBody makes a Body that is not JSON made from a value (a malformed or
// non-object body), with the same placeholders.
func rawBody(s string) func(Values) []byte {
	return func(vals Values) []byte {
		return []byte(fill(s, vals).(string))
	}
}

type obj = map[string]any
type arr = []any

// ErrorCases returns the error cases of the contract that a client can
// provoke without harm: 401 for each way of not presenting a valid key,
// 403 for a read-scope key's writes, 404 for missing contexts and paths,
// 405, the 400s of every field rule (with their param) and of bad list and
// export parameters, and 413. The 429 of an exhausted rate limit and the
// 409 of a running idempotent request are left out: they cannot be
// provoked by one request. Each call returns new values.
func ErrorCases() []ErrorCase {
	const list = "/contexts?limit=1"
	name := func(extra obj) func(Values) []byte {
		o := obj{"name": "{name}", "tags": arr{"{tag}"}}
		for k, v := range extra {
			o[k] = v
		}
		return jsonBody(o)
	}
	hook := func(change obj, drop string) func(Values) []byte {
		o := obj{"url": "{url}", "events": arr{"context.created"}, "secret": "{secret}"}
		for k, v := range change {
			o[k] = v
		}
		delete(o, drop)
		return jsonBody(o)
	}
	manyTags := arr{"{tag}"}
	for i := range MaxTags {
		manyTags = append(manyTags, "t"+string(rune('a'+i)))
	}
	return []ErrorCase{
		// 401: the API key.
		{Name: "no Authorization header", Operation: OpListContexts, Method: http.MethodGet, Path: list, Auth: AuthNone,
			Status: 401, Type: TypeUnauthorized, Safe: true},
		{Name: "a scheme other than Bearer", Operation: OpListContexts, Method: http.MethodGet, Path: list, Auth: AuthBasic,
			Status: 401, Type: TypeUnauthorized, Safe: true},
		{Name: "a key the server does not know", Operation: OpListContexts, Method: http.MethodGet, Path: list, Auth: AuthUnknown,
			Status: 401, Type: TypeUnauthorized, Safe: true},

		// 403: a read-scope key writing.
		{Name: "a read-scope key updates", Operation: OpUpdateContext, Method: http.MethodPut, Path: "/contexts/{id}", Subject: SubjectMissing,
			Auth: AuthReadKey, Body: jsonBody(obj{"name": "{name}"}), Status: 403, Type: TypeForbidden, Safe: true},
		{Name: "a read-scope key deletes", Operation: OpDeleteContext, Method: http.MethodDelete, Path: "/contexts/{id}", Subject: SubjectMissing,
			Auth: AuthReadKey, Status: 403, Type: TypeForbidden, Safe: true},
		{Name: "a read-scope key creates", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Auth: AuthReadKey, Body: name(nil), Status: 403, Type: TypeForbidden},

		// 404: missing contexts, versions and paths.
		{Name: "a missing context", Operation: OpGetContext, Method: http.MethodGet, Path: "/contexts/{id}", Subject: SubjectMissing,
			Status: 404, Type: TypeNotFound, Safe: true},
		{Name: "the versions of a missing context", Operation: OpListVersions, Method: http.MethodGet, Path: "/contexts/{id}/versions", Subject: SubjectMissing,
			Status: 404, Type: TypeNotFound, Safe: true},
		{Name: "the export of a missing context", Operation: OpExportContext, Method: http.MethodGet, Path: "/contexts/{id}/export", Subject: SubjectMissing,
			Status: 404, Type: TypeNotFound, Safe: true},
		{Name: "deleting a missing context", Operation: OpDeleteContext, Method: http.MethodDelete, Path: "/contexts/{id}", Subject: SubjectMissing,
			Status: 404, Type: TypeNotFound, Safe: true},
		// A server that creates on PUT would create it: not safe.
		{Name: "updating a missing context", Operation: OpUpdateContext, Method: http.MethodPut, Path: "/contexts/{id}", Subject: SubjectMissing,
			Body: name(nil), Status: 404, Type: TypeNotFound},
		{Name: "a version that never existed", Operation: OpExportContext, Method: http.MethodGet, Path: "/contexts/{id}/export?version=99", Subject: SubjectOwn,
			Status: 404, Type: TypeNotFound},
		{Name: "a path the API does not have", Method: http.MethodGet, Path: "/no-such-resource",
			Status: 404, Type: TypeNotFound, Safe: true},

		// 405.
		{Name: "a method the path does not serve", Method: http.MethodPatch, Path: "/contexts/{id}", Subject: SubjectMissing,
			Body: jsonBody(obj{"name": "{name}"}), Status: 405, Type: TypeMethodNotAllowed, Safe: true},

		// 400: list parameters.
		{Name: "limit 0", Operation: OpListContexts, Method: http.MethodGet, Path: "/contexts?limit=0",
			Status: 400, Type: TypeInvalidRequest, Param: "limit", Safe: true},
		{Name: "limit 101", Operation: OpListContexts, Method: http.MethodGet, Path: "/contexts?limit=101",
			Status: 400, Type: TypeInvalidRequest, Param: "limit", Safe: true},
		{Name: "a limit that is no number", Operation: OpListContexts, Method: http.MethodGet, Path: "/contexts?limit=ten",
			Status: 400, Type: TypeInvalidRequest, Param: "limit", Safe: true},
		{Name: "a cursor the server did not issue", Operation: OpListContexts, Method: http.MethodGet, Path: "/contexts?cursor=not-a-cursor",
			Status: 400, Type: TypeInvalidRequest, Param: "cursor", Safe: true},
		{Name: "an unknown export format", Operation: OpExportContext, Method: http.MethodGet, Path: "/contexts/{id}/export?format=docx", Subject: SubjectOwn,
			Status: 400, Type: TypeInvalidRequest, Param: "format"},

		// 400: the fields of a create.
		{Name: "an unknown field", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: name(obj{"contnet": "typo"}), Status: 400, Type: TypeInvalidRequest, Param: "contnet"},
		{Name: "no name", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: jsonBody(obj{"content": "{name}", "tags": arr{"{tag}"}}), Status: 400, Type: TypeInvalidRequest, Param: "name"},
		{Name: "an empty name", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: jsonBody(obj{"name": "", "content": "{name}", "tags": arr{"{tag}"}}), Status: 400, Type: TypeInvalidRequest, Param: "name"},
		{Name: "a name of white space only", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: jsonBody(obj{"name": " \t ", "content": "{name}", "tags": arr{"{tag}"}}), Status: 400, Type: TypeInvalidRequest, Param: "name"},
		{Name: "a name of 201 characters", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: func(v Values) []byte {
				n := v.Name + " " + strings.Repeat("x", max(0, MaxNameRunes-len([]rune(v.Name))))
				b, _ := json.Marshal(obj{"name": n, "tags": arr{v.Tag}})
				return b
			}, Status: 400, Type: TypeInvalidRequest, Param: "name"},
		{Name: "21 tags", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: name(obj{"tags": manyTags}), Status: 400, Type: TypeInvalidRequest, Param: "tags"},
		{Name: "a tag of 51 characters", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: name(obj{"tags": arr{"{tag}", strings.Repeat("t", MaxTagRunes+1)}}), Status: 400, Type: TypeInvalidRequest, Param: "tags"},
		{Name: "an empty tag", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: name(obj{"tags": arr{"{tag}", ""}}), Status: 400, Type: TypeInvalidRequest, Param: "tags"},
		{Name: "tags that are not an array", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: name(obj{"tags": "{tag}"}), Status: 400, Type: TypeInvalidRequest, Param: "tags"},
		{Name: "a null field", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: name(obj{"content": nil}), Status: 400, Type: TypeInvalidRequest, Param: "content"},
		{Name: "a body that is not an object", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: rawBody(`["{name}"]`), Status: 400, Type: TypeInvalidRequest},
		{Name: "malformed JSON", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: rawBody(`{"name":"{name}",`), Status: 400, Type: TypeInvalidRequest},

		// 400: the fields of an update.
		{Name: "an update that sets nothing", Operation: OpUpdateContext, Method: http.MethodPut, Path: "/contexts/{id}", Subject: SubjectOwn,
			Body: rawBody(`{}`), Status: 400, Type: TypeInvalidRequest},
		{Name: "an update with an unknown field", Operation: OpUpdateContext, Method: http.MethodPut, Path: "/contexts/{id}", Subject: SubjectOwn,
			Body: jsonBody(obj{"contnet": "typo"}), Status: 400, Type: TypeInvalidRequest, Param: "contnet"},
		{Name: "an update to a null name", Operation: OpUpdateContext, Method: http.MethodPut, Path: "/contexts/{id}", Subject: SubjectOwn,
			Body: jsonBody(obj{"name": nil}), Status: 400, Type: TypeInvalidRequest, Param: "name"},

		// 400: the fields of a webhook registration.
		{Name: "an http webhook url that is not loopback", Operation: OpRegisterWebhook, Method: http.MethodPost, Path: "/webhooks",
			Body: hook(obj{"url": "http://example.invalid/{tag}"}, ""), Status: 400, Type: TypeInvalidRequest, Param: "url"},
		{Name: "a webhook url that is not absolute", Operation: OpRegisterWebhook, Method: http.MethodPost, Path: "/webhooks",
			Body: hook(obj{"url": "/hooks/{tag}"}, ""), Status: 400, Type: TypeInvalidRequest, Param: "url"},
		{Name: "no events", Operation: OpRegisterWebhook, Method: http.MethodPost, Path: "/webhooks",
			Body: hook(obj{"events": arr{}}, ""), Status: 400, Type: TypeInvalidRequest, Param: "events"},
		{Name: "an unknown event type", Operation: OpRegisterWebhook, Method: http.MethodPost, Path: "/webhooks",
			Body: hook(obj{"events": arr{"context.exploded"}}, ""), Status: 400, Type: TypeInvalidRequest, Param: "events"},
		{Name: "no secret", Operation: OpRegisterWebhook, Method: http.MethodPost, Path: "/webhooks",
			Body: hook(nil, "secret"), Status: 400, Type: TypeInvalidRequest, Param: "secret"},
		{Name: "an empty secret", Operation: OpRegisterWebhook, Method: http.MethodPost, Path: "/webhooks",
			Body: hook(obj{"secret": ""}, ""), Status: 400, Type: TypeInvalidRequest, Param: "secret"},

		// 413.
		{Name: "a body over 2 MiB", Operation: OpCreateContext, Method: http.MethodPost, Path: "/contexts",
			Body: func(v Values) []byte {
				b, _ := json.Marshal(obj{"name": v.Name, "tags": arr{v.Tag}, "content": strings.Repeat("a", MaxBodyBytes)})
				return b
			}, Status: 413, Type: TypePayloadTooLarge},
	}
}
