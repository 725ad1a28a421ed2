package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Reading is what one of the SDK's own methods makes of a recorded answer:
// [ReadAnswer] replays the answer to the method of its operation, so the
// SDK's decoding, not a description of it, says what a caller would get.
type Reading struct {
	// Method names the SDK method, e.g. "Contexts.List".
	Method string
	// Err is the error the method returned, nil on success.
	Err error
	// Value is the method's result on success: *contextsvc.Context,
	// *contextsvc.ContextList, *contextsvc.VersionList,
	// *contextsvc.DeleteResult, *contextsvc.Webhook, *ExportReading or, for
	// a delivery, *DeliveryReading.
	Value any
	// Response is what WithResponseInto reported (zero for a delivery).
	Response contextsvc.Response
}

// ExportReading is what Contexts.Export returned, its body read.
type ExportReading struct {
	ContentType string
	Filename    string
	Body        []byte
}

// DeliveryReading is what ConstructEvent and ParseData made of a delivery.
type DeliveryReading struct {
	Event *contextsvc.Event
	// Data is ParseData's result: *contextsvc.ContextCreatedData…, or
	// json.RawMessage for a type the SDK does not know.
	Data any
}

// replayTransport answers every request with one recorded answer.
type replayTransport struct{ ex *Exchange }

func (t replayTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{
		Status:        strconv.Itoa(t.ex.Status) + " " + http.StatusText(t.ex.Status),
		StatusCode:    t.ex.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        t.ex.Header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(t.ex.Body)),
		ContentLength: int64(len(t.ex.Body)),
		Request:       req,
	}, nil
}

// replayBase is the base URL of the replaying client; nothing is sent there.
const replayBase = "http://replay.invalid/v1"

// ReadAnswer replays ex's answer through the SDK method of operation op
// (an operation id, see [Operations]): a client whose transport returns the
// recorded answer, without retries, calls the method with arguments taken
// from ex's request. Nothing is sent anywhere.
func ReadAnswer(op string, ex *Exchange) Reading {
	if ex.Header == nil {
		ex = &Exchange{Method: ex.Method, Path: ex.Path, RawQuery: ex.RawQuery, Status: ex.Status, Header: http.Header{}, Body: ex.Body}
	}
	client, err := contextsvc.NewClient("replay",
		contextsvc.WithBaseURL(replayBase),
		contextsvc.WithHTTPClient(&http.Client{Transport: replayTransport{ex}}),
		contextsvc.WithMaxRetries(0))
	if err != nil {
		return Reading{Method: op, Err: err}
	}
	ctx := context.Background()
	var resp contextsvc.Response
	into := contextsvc.WithResponseInto(&resp)
	q, _ := url.ParseQuery(ex.RawQuery)
	id := contextID(ex.Path)
	r := Reading{}
	switch op {
	case OpListContexts:
		limit, _ := strconv.Atoi(q.Get("limit"))
		r.Method = "Contexts.List"
		r.Value, r.Err = client.Contexts.List(ctx, &contextsvc.ContextListOptions{Limit: limit, Cursor: q.Get("cursor"), Tags: q["tag"]}, into)
	case OpGetContext:
		r.Method = "Contexts.Get"
		r.Value, r.Err = client.Contexts.Get(ctx, id, into)
	case OpCreateContext:
		r.Method = "Contexts.Create"
		r.Value, r.Err = client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "replay"}, into)
	case OpUpdateContext:
		r.Method = "Contexts.Update"
		r.Value, r.Err = client.Contexts.Update(ctx, id, &contextsvc.UpdateContextRequest{Name: contextsvc.Ptr("replay")}, into)
	case OpDeleteContext:
		r.Method = "Contexts.Delete"
		r.Value, r.Err = client.Contexts.Delete(ctx, id, into)
	case OpListVersions:
		r.Method = "Contexts.Versions"
		r.Value, r.Err = client.Contexts.ListVersions(ctx, id, nil, into)
	case OpExportContext:
		r.Method = "Contexts.Export"
		var exp *contextsvc.Export
		exp, r.Err = client.Contexts.Export(ctx, id, &contextsvc.ExportOptions{Format: contextsvc.ExportFormat(q.Get("format"))}, into)
		if r.Err == nil {
			body, err := io.ReadAll(exp.Body)
			exp.Body.Close()
			r.Value, r.Err = &ExportReading{ContentType: exp.ContentType, Filename: exp.Filename, Body: body}, err
		}
	case OpRegisterWebhook:
		r.Method = "Webhooks.Register"
		r.Value, r.Err = client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
			URL: "https://replay.invalid/hook", Events: []contextsvc.EventType{contextsvc.EventContextCreated}, Secret: "replay"}, into)
	case "":
		// A path or method the API does not serve: what Client.Do, the
		// SDK's way to send any request, makes of the answer.
		r.Method = "Client.Do"
		var req *http.Request
		req, r.Err = client.NewRequest(ctx, ex.Method, strings.TrimPrefix(ex.Target(), "/v1"), nil)
		if r.Err == nil {
			_, r.Err = client.Do(ctx, req, nil, into)
		}
	default:
		return Reading{Method: op, Err: fmt.Errorf("contract: the SDK has no method for operation %q", op)}
	}
	r.Response = resp
	if r.Err != nil {
		r.Value = nil // a typed nil would read as a result
	}
	return r
}

// contextID is the {id} of a /v1/contexts/{id}… path, "x" when it has none
// or one the SDK would refuse before sending (an empty id, "..", "a;b", a
// control character…, which a client under test may well send): the
// replay judges how the SDK reads the answer, whatever the id was. Only ids
// of letters, digits and "_-.~" are kept, a subset of what the SDK sends.
func contextID(p string) string {
	rest, ok := strings.CutPrefix(p, "/v1/contexts/")
	if !ok {
		return "x"
	}
	id, _, _ := strings.Cut(rest, "/")
	u, err := url.PathUnescape(id)
	if err != nil || u == "" || u == "." || u == ".." || strings.ContainsFunc(u, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.~", r))
	}) {
		return "x"
	}
	return u
}

// ReadDelivery runs a delivered request through the SDK's receiving side:
// ConstructEvent (the signature verifier, then the envelope parser) with
// secret, then ParseData. The replay window is off: an event's age is a
// receiver's policy against its own clock, not the contract, and a
// deployment under check may run on a fake clock.
func ReadDelivery(body []byte, header http.Header, secret string) Reading {
	r := Reading{Method: "ConstructEvent"}
	ev, err := contextsvc.ConstructEventWithOptions(body, header.Get(HeaderSignature), []string{secret}, contextsvc.WithEventReplayWindow(0, 0))
	if err != nil {
		r.Err = err
		return r
	}
	data, err := ev.ParseData()
	if err != nil {
		r.Method, r.Err = "Event.ParseData", err
		return r
	}
	r.Value = &DeliveryReading{Event: ev, Data: data}
	return r
}

// String says what the method returned, e.g. `Contexts.List returns 3
// contexts, HasMore false`.
func (r Reading) String() string {
	if r.Err != nil {
		var e *contextsvc.Error
		if errors.As(r.Err, &e) {
			s := fmt.Sprintf("%s returns a *contextsvc.Error: StatusCode %d, Type %q, Param %q, RequestID %q", r.Method, e.StatusCode, e.Type, e.Param, e.RequestID)
			if e.RetryAfter > 0 {
				s += fmt.Sprintf(", RetryAfter %s", e.RetryAfter)
			}
			return s
		}
		return r.Method + " fails: " + r.Err.Error()
	}
	switch v := r.Value.(type) {
	case *contextsvc.Context:
		return fmt.Sprintf("%s returns context %q, version %d", r.Method, v.ID, v.Version)
	case *contextsvc.Webhook:
		return fmt.Sprintf("%s returns webhook %q, %d events, Active %t", r.Method, v.ID, len(v.Events), v.Active)
	case *contextsvc.ContextList:
		return fmt.Sprintf("%s returns %d contexts, HasMore %t%s", r.Method, len(v.Data), v.HasMore, cursorNote(v.NextCursor))
	case *contextsvc.VersionList:
		return fmt.Sprintf("%s returns %d versions, HasMore %t%s", r.Method, len(v.Data), v.HasMore, cursorNote(v.NextCursor))
	case *contextsvc.DeleteResult:
		return fmt.Sprintf("%s returns ID %q, Deleted %t", r.Method, v.ID, v.Deleted)
	case *ExportReading:
		return fmt.Sprintf("%s returns %d bytes, ContentType %q, Filename %q", r.Method, len(v.Body), v.ContentType, v.Filename)
	case *DeliveryReading:
		return fmt.Sprintf("%s verifies and parses event %q (%s); ParseData gives %T", r.Method, v.Event.ID, v.Event.Type, v.Data)
	}
	if r.Value == nil {
		return r.Method + " succeeds"
	}
	return r.Method + " returns " + fmt.Sprintf("%T", r.Value)
}

func cursorNote(c string) string {
	if c == "" {
		return ", no NextCursor"
	}
	return ", a NextCursor"
}

// Expect is what the contract's answer to a request would have been, as
// far as the one judging an answer knows it; the zero value knows nothing
// but the answer itself.
type Expect struct {
	// Status is the contract's status (0: the answer's own).
	Status int
	// Type and Param are the contract's error type and param, for an error.
	Type, Param string
	// MorePages, for a list page, tells that the contract's answer says
	// more pages follow.
	MorePages bool
	// Headers tells the difference judged is in the headers: the verdict
	// then says what the SDK's Response (or Error) shows of the request id
	// and the rate limit.
	Headers bool
}

// Verdict says whether the SDK tolerates an answer, and how it reads it.
type Verdict struct {
	// Tolerated is true when code written against the contract (and the
	// mock) still gets from the SDK what the answer means: the same result,
	// or an error of the same class.
	Tolerated bool `json:"tolerated"`
	// SDK says what the SDK's method made of the answer, and what its
	// caller loses.
	SDK string `json:"sdk"`
}

// Judge decides from r, the SDK's reading of ex's answer ([ReadAnswer] or
// [ReadDelivery]), whether the SDK tolerates the answer, given what the
// contract's answer would have been.
func Judge(ex *Exchange, r Reading, want Expect) Verdict {
	if want.Status == 0 {
		want.Status = ex.Status
	}
	wantOK := want.Status >= 200 && want.Status <= 299
	desc := r.String()
	var notes []string
	switch {
	case r.Err != nil && wantOK:
		return Verdict{false, desc + "; code that gets a result from the mock gets this error"}
	case r.Err == nil && !wantOK:
		return Verdict{false, fmt.Sprintf("%s; code that handles the mock's %d error gets a result instead", desc, want.Status)}
	case r.Err != nil:
		var e *contextsvc.Error
		if !errors.As(r.Err, &e) {
			return Verdict{false, desc}
		}
		if class := lostClass(want.Status, r.Err); class != "" {
			return Verdict{false, fmt.Sprintf("%s; errors.Is(err, %s) no longer holds, as it does on the mock's %d", desc, class, want.Status)}
		}
		if want.Type != "" && e.Type != want.Type {
			notes = append(notes, fmt.Sprintf("Error.Type is %q, not %q", e.Type, want.Type))
		}
		if want.Param != "" && e.Param != want.Param {
			notes = append(notes, fmt.Sprintf("Error.Param is %q, not %q", e.Param, want.Param))
		}
		if want.Headers && e.RequestID == "" {
			notes = append(notes, "Error.RequestID is empty")
		}
		if want.Headers && e.RateLimit.Limit == 0 {
			notes = append(notes, "Error.RateLimit is zero")
		}
	default:
		ok, lost := judgeValue(ex, r, want)
		if !ok {
			return Verdict{false, desc + "; " + lost}
		}
		if lost != "" {
			notes = append(notes, lost)
		}
		if want.Headers && r.Response.RequestID == "" {
			notes = append(notes, "Response.RequestID is empty")
		}
		if want.Headers && r.Response.RateLimit.Limit == 0 {
			notes = append(notes, "Response.RateLimit is zero (Client.RateLimit too)")
		}
	}
	if len(notes) > 0 {
		desc += "; " + strings.Join(notes, "; ")
	}
	return Verdict{true, desc}
}

// judgeValue compares a successful reading with the answer's body: the
// SDK must find what the body holds. It returns false with why when it does
// not, else true with what the caller loses ("" for nothing).
func judgeValue(ex *Exchange, r Reading, want Expect) (bool, string) {
	switch v := r.Value.(type) {
	case *contextsvc.Context:
		return judgeObject(ex.Body, v.ID, v)
	case *contextsvc.Webhook:
		return judgeObject(ex.Body, v.ID, v)
	case *contextsvc.ContextList:
		return judgeList(ex.Body, len(v.Data), v.HasMore, v.NextCursor, want)
	case *contextsvc.VersionList:
		return judgeList(ex.Body, len(v.Data), v.HasMore, v.NextCursor, want)
	case *contextsvc.DeleteResult:
		if !v.Deleted {
			return false, "the caller reads Deleted false"
		}
	case *ExportReading:
		if !bytes.Equal(v.Body, ex.Body) {
			return false, "the document the caller reads differs from the one sent"
		}
	}
	return true, ""
}

// JudgeDelivery decides from r, the SDK's reading of a delivered body
// ([ReadDelivery]), whether a receiver on the SDK takes the delivery: it
// must verify and parse; data fields the delivery lacks are read as zero.
func JudgeDelivery(body []byte, r Reading) Verdict {
	if r.Err != nil {
		return Verdict{false, r.String() + "; a receiver on the SDK refuses the delivery (NewWebhookHandler answers 400 or 401), so the service retries it in vain"}
	}
	desc := r.String()
	if d, ok := r.Value.(*DeliveryReading); ok {
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(body, &env)
		if lost := absentFields(env.Data, d.Data); lost != "" {
			desc += "; ParseData reads " + lost + " as zero (absent)"
		}
	}
	return Verdict{true, desc}
}

// judgeObject checks that the SDK read the id the body holds, and names
// the fields it reads as zero because the body lacks them.
func judgeObject(body []byte, id string, v any) (bool, string) {
	raw := firstID(body)
	if raw == "" || id != raw {
		return false, fmt.Sprintf("the caller reads ID %q, the answer holds %q", id, raw)
	}
	if lost := absentFields(body, v); lost != "" {
		return true, "the caller reads " + lost + " as zero (absent)"
	}
	return true, ""
}

// judgeList checks that the SDK read every item of the page and, when the
// contract's answer says more pages follow, that the SDK saw so.
func judgeList(body []byte, n int, hasMore bool, cursor string, want Expect) (bool, string) {
	if raw := countItems(body); raw != n {
		return false, fmt.Sprintf("the caller reads %d items of the %d the answer holds", n, raw)
	}
	if want.MorePages && (!hasMore || cursor == "") {
		return false, "the caller sees no further page, so All stops here and the next pages are never fetched"
	}
	return true, ""
}

// firstID returns the "id" string of the body's top-level object, or of the
// first object nested in it that has one (a wrapped answer).
func firstID(body []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return ""
	}
	queue := []map[string]json.RawMessage{top}
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		var id string
		if json.Unmarshal(o["id"], &id) == nil && id != "" {
			return id
		}
		keys := make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			var inner map[string]json.RawMessage
			if json.Unmarshal(o[k], &inner) == nil {
				queue = append(queue, inner)
			}
		}
	}
	return ""
}

// countItems counts the objects of a list answer: a bare array, or the
// first array of objects among the top-level object's fields (data,
// contexts, versions, items…).
func countItems(body []byte) int {
	var items []json.RawMessage
	if json.Unmarshal(body, &items) == nil {
		return len(items)
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return 0
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// The contract's key first, then any other in a stable order.
	keys = append([]string{"data"}, keys...)
	for _, k := range keys {
		var objs []map[string]json.RawMessage
		if json.Unmarshal(top[k], &objs) == nil && len(objs) > 0 {
			return len(objs)
		}
	}
	return 0
}

// absentFields names, comma-separated, the fields the SDK's value has that
// the raw JSON object lacks or holds as null: what the caller reads as zero.
func absentFields(raw []byte, v any) string {
	var have map[string]json.RawMessage
	if json.Unmarshal(raw, &have) != nil {
		return ""
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(enc, &fields) != nil {
		return ""
	}
	var lost []string
	for k := range fields {
		if val, ok := have[k]; !ok || string(val) == "null" {
			lost = append(lost, k)
		}
	}
	slices.Sort(lost)
	return strings.Join(lost, ", ")
}

// sentinels are the SDK's error classes, by the name a caller writes.
var sentinels = []struct {
	name string
	err  error
}{
	{"contextsvc.ErrBadRequest", contextsvc.ErrBadRequest},
	{"contextsvc.ErrUnauthorized", contextsvc.ErrUnauthorized},
	{"contextsvc.ErrForbidden", contextsvc.ErrForbidden},
	{"contextsvc.ErrNotFound", contextsvc.ErrNotFound},
	{"contextsvc.ErrRateLimited", contextsvc.ErrRateLimited},
	{"contextsvc.ErrServer", contextsvc.ErrServer},
}

// lostClass returns the name of the SDK error class that the contract's
// status falls in and err does not ("" when none is lost): the SDK's own
// *Error.Is decides both.
func lostClass(status int, err error) string {
	want := &contextsvc.Error{StatusCode: status}
	for _, s := range sentinels {
		if errors.Is(want, s.err) && !errors.Is(err, s.err) {
			return s.name
		}
	}
	return ""
}
