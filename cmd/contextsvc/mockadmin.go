package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/redact"
)

// The mock's admin API (/_mock/ beside /v1) is the mock's own, not the
// service's: the SDK's client sends nothing outside the base URL, so these
// requests go through a plain HTTP client, bounded in time and size, and
// their errors are made the SDK's *contextsvc.Error all the same.

// Environment variables with the credentials of a mock started with
// -admin-auth-file.
const (
	envAdminUser     = "CONTEXTSVC_MOCK_ADMIN_USER"
	envAdminPassword = "CONTEXTSVC_MOCK_ADMIN_PASSWORD"
)

const (
	adminTimeout = 30 * time.Second
	probeTimeout = 5 * time.Second
	maxAdminBody = 4 << 20
	// adminRealm is the realm of the mock's Basic challenge: the admin
	// credentials answer that challenge and no other.
	adminRealm = "contextsvc-mock admin"
)

// serverKind is what serves the base URL, as far as the admin API tells.
type serverKind int

const (
	// kindDeployment: no mock's admin API (a deployment, a mock with
	// -admin=false, or the mock as a validating proxy of a deployment).
	kindDeployment serverKind = iota
	// kindMock: the mock, its admin API at hand.
	kindMock
	// kindLockedMock: the mock, whose admin API asks for credentials
	// this command does not have, or may not send there.
	kindLockedMock
)

// mockAdmin is a client of the mock's admin API.
type mockAdmin struct {
	base           string // the admin API's URL, ending in /_mock
	hc             *http.Client
	user, password string
	// authorized is set once the server has asked for the admin
	// credentials with the mock's challenge and may have them: only then
	// do requests carry them.
	authorized bool
	// refused says why the credentials were not sent, or not taken.
	refused error
	debug   *debugLog
}

// newMockAdmin is the admin API's client for the server at baseURL (a
// /v1 URL), with the credentials of the environment.
func newMockAdmin(baseURL string, getenv func(string) string, debug *debugLog) *mockAdmin {
	return &mockAdmin{
		base:     strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1") + "/_mock",
		hc:       &http.Client{Timeout: adminTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		user:     getenv(envAdminUser),
		password: getenv(envAdminPassword),
		debug:    debug,
	}
}

// mockOnly is the admin API of the mock at the base URL, for a command
// that works on the mock alone (name is the command, why what the
// service's /v1 API lacks for it). A deployment is an unsupportedError,
// a mock whose admin API asks for credentials the command does not have
// (or may not send) a usage error.
func (f *apiFlags) mockOnly(ctx context.Context, name, why string) (*mockAdmin, error) {
	base, err := f.base()
	if err != nil {
		return nil, err
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v1") {
		return nil, usagef("the base URL must be an absolute http or https URL ending in /v1, got %q", redact.URL(base))
	}
	m, kind := probe(ctx, f.s.mockAdmin(base))
	switch kind {
	case kindLockedMock:
		return nil, m.lockedError()
	case kindDeployment:
		return nil, unsupportedf("%s works on the mock only: %s, and the server at %s is not the mock (it has no /_mock/ admin API)", name, why, redact.URL(base))
	}
	return m, nil
}

// mockAdmin is the admin API's client for the server at baseURL, with
// the streams' environment, transport and --debug log.
func (s *streams) mockAdmin(baseURL string) *mockAdmin {
	m := newMockAdmin(baseURL, s.getenv, s.debugLog())
	if s.transport != nil {
		m.hc.Transport = s.transport
	}
	return m
}

// probe finds out whether m's base URL is served by the mock, from its
// answer to GET /_mock/contract. It never fails: whatever does not answer
// as the mock is a deployment. Its first request carries no credentials:
// they go only in answer to the mock's challenge.
func probe(ctx context.Context, m *mockAdmin) (*mockAdmin, serverKind) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	status, header, body, err := m.send(ctx, http.MethodGet, "/contract", nil)
	if err != nil {
		return nil, kindDeployment
	}
	if status == http.StatusUnauthorized && basicRealm(header) == adminRealm {
		if err := m.authorize(); err != nil {
			return m, kindLockedMock
		}
		if status, _, body, err = m.send(ctx, http.MethodGet, "/contract", nil); err != nil {
			m.refused = err
			return m, kindLockedMock
		}
		if status == http.StatusUnauthorized {
			m.refused = fmt.Errorf("the mock refused the admin credentials of %s and %s", envAdminUser, envAdminPassword)
			return m, kindLockedMock
		}
	}
	var c struct {
		Proxy *bool `json:"proxy"`
	}
	if status == http.StatusOK && json.Unmarshal(body, &c) == nil && c.Proxy != nil && !*c.Proxy {
		return m, kindMock
	}
	return nil, kindDeployment
}

// lockedError says what a mock that asks for admin credentials needs.
func (m *mockAdmin) lockedError() error {
	if m.refused != nil {
		return &usageError{m.refused.Error()}
	}
	return usagef("the mock asks for admin credentials (it was started with -admin-auth-file): set %s and %s", envAdminUser, envAdminPassword)
}

// authorize answers the mock's challenge: from now on the requests carry
// the credentials, when there are some and they may go to this server
// (never over plain http to a host that is not this machine, where anyone
// on the way reads them). Otherwise it says why not (and keeps it in
// refused).
func (m *mockAdmin) authorize() error {
	if m.user == "" && m.password == "" {
		return m.lockedError()
	}
	u, err := url.Parse(m.base)
	if err != nil {
		return err
	}
	if u.Scheme != "https" && !onThisMachine(m.base) {
		m.refused = fmt.Errorf("the server at %s asks for the mock's admin credentials, and %s and %s are set, but they are not sent "+
			"over plain http to a host that is not this machine (anyone on the way could read them): reach the mock over https, or from its own machine",
			u.Host, envAdminUser, envAdminPassword)
		return m.refused
	}
	m.authorized = true
	return nil
}

// request builds an admin request to path (from /_mock on).
func (m *mockAdmin) request(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "contextsvc-cli/"+commandVersion())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if m.authorized {
		req.SetBasicAuth(m.user, m.password)
	}
	return req, nil
}

// do sends an admin request and decodes a 2xx answer into out (when not
// nil); it returns the answer's body as it came. Another status is an
// *adminAPIError (a *contextsvc.Error, as the SDK makes of a /v1 answer).
// The credentials
// go only in answer to the mock's challenge (a 401 whose WWW-Authenticate
// names the mock's realm), and then with every later request.
func (m *mockAdmin) do(ctx context.Context, method, path string, body, out any) ([]byte, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	for {
		status, header, b, err := m.send(ctx, method, path, payload)
		if err != nil {
			return nil, err
		}
		if status == http.StatusUnauthorized && !m.authorized && basicRealm(header) == adminRealm {
			if err := m.authorize(); err != nil {
				return nil, err
			}
			continue
		}
		if status < 200 || status > 299 {
			return nil, adminError(status, header, b)
		}
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				return nil, fmt.Errorf("the mock's admin API: %s %s: decoding the answer: %w", method, "/_mock"+path, err)
			}
		}
		return b, nil
	}
}

// send makes one request and reads its answer, bounded.
func (m *mockAdmin) send(ctx context.Context, method, path string, payload []byte) (int, http.Header, []byte, error) {
	req, err := m.request(ctx, method, path, payload)
	if err != nil {
		return 0, nil, nil, err
	}
	start := time.Now()
	resp, err := m.hc.Do(req)
	if err != nil {
		m.debug.attempt(req, nil, time.Since(start), err)
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, nil, fmt.Errorf("the mock's admin API: %s %s: %w", method, "/_mock"+path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAdminBody+1))
	m.debug.attempt(req, resp, time.Since(start), err)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("the mock's admin API: %s %s: reading the answer: %w", method, "/_mock"+path, err)
	}
	if len(b) > maxAdminBody {
		return 0, nil, nil, fmt.Errorf("the mock's admin API: %s %s: an answer over %d bytes", method, "/_mock"+path, maxAdminBody)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// basicRealm is the realm of the Basic challenge among an answer's
// WWW-Authenticate values, "" when there is none.
func basicRealm(h http.Header) string {
	for _, v := range h.Values("WWW-Authenticate") {
		scheme, params, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "Basic") {
			continue
		}
		for params != "" {
			var name, value string
			name, params, _ = strings.Cut(strings.TrimLeft(params, " ,"), "=")
			if strings.HasPrefix(params, `"`) {
				end := strings.IndexByte(params[1:], '"')
				if end < 0 {
					break
				}
				value, params = params[1:end+1], params[end+2:]
			} else {
				value, params, _ = strings.Cut(params, ",")
			}
			if strings.EqualFold(strings.TrimSpace(name), "realm") {
				return value
			}
		}
	}
	return ""
}

// adminAPIError is an error answer of the mock's admin API: a
// *contextsvc.Error, as the SDK makes of a /v1 answer, known apart from
// those.
type adminAPIError struct{ e *contextsvc.Error }

func (e *adminAPIError) Error() string { return e.e.Error() }
func (e *adminAPIError) Unwrap() error { return e.e }

// adminError makes an admin API's error answer an *adminAPIError.
func adminError(status int, header http.Header, body []byte) error {
	e := &contextsvc.Error{StatusCode: status, RequestID: header.Get("X-Request-Id"), Attempts: 1, Body: body}
	var doc struct {
		Error struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			Param     string `json:"param"`
			RequestID string `json:"requestId"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &doc) == nil {
		e.Type, e.Message, e.Param = cell(doc.Error.Type, 100), cell(doc.Error.Message, 1000), cell(doc.Error.Param, 100)
		if doc.Error.RequestID != "" {
			e.RequestID = cell(doc.Error.RequestID, 100)
		}
	}
	if e.Message == "" {
		e.Message = strings.ToLower(http.StatusText(status))
	}
	e.Message = "the mock's admin API: " + e.Message
	return &adminAPIError{e}
}

// adminPage is a page of an admin list, in the shape of the /v1 lists.
type adminPage[T any] struct {
	Data       []T    `json:"data"`
	HasMore    bool   `json:"hasMore"`
	NextCursor string `json:"nextCursor"`
}

// maxAdminPages bounds the pages an admin list is read through: the
// mock keeps a bounded history (-history-limit), so a list longer than
// this is a server that is not the mock. maxAdminCursor bounds a cursor's
// length (the mock's are under a hundred bytes), and with it what the
// pages' cursors hold, kept to find a cycle; maxAdminAccounts bounds the
// accounts collected to find a key's (the mock has one a -key at most).
const (
	maxAdminPages    = 1000
	maxAdminCursor   = 1 << 10
	maxAdminAccounts = 10_000
)

// everyPage reads every page of the admin list at path (its query in q),
// handing each to fn with its body as it came.
func everyPage[T any](ctx context.Context, m *mockAdmin, path string, q url.Values, fn func(page *adminPage[T], raw []byte) error) error {
	seen := map[string]bool{}
	for range maxAdminPages {
		var page adminPage[T]
		raw, err := m.do(ctx, http.MethodGet, path+"?"+q.Encode(), nil, &page)
		if err != nil {
			return err
		}
		if err := fn(&page, raw); err != nil {
			return err
		}
		if !page.HasMore {
			return nil
		}
		if page.NextCursor == "" || seen[page.NextCursor] {
			return fmt.Errorf("the mock's admin API: %s: %w", path, contextsvc.ErrPaginationLoop)
		}
		if len(page.NextCursor) > maxAdminCursor {
			return fmt.Errorf("the mock's admin API: %s: a cursor of %d bytes, over the %d a mock gives", path, len(page.NextCursor), maxAdminCursor)
		}
		seen[page.NextCursor] = true
		q.Set("cursor", page.NextCursor)
	}
	return fmt.Errorf("the mock's admin API: %s: more than %d pages: %w", path, maxAdminPages, contextsvc.ErrPaginationLoop)
}

// mockAccount is an account as GET /_mock/accounts shows it.
type mockAccount struct {
	ID    string   `json:"id"`
	Users []string `json:"users"`
	Keys  []struct {
		Token string `json:"token"` // masked
		User  string `json:"user"`
	} `json:"keys"`
}

// accounts lists the mock's accounts, every page (a mock has few).
func (m *mockAdmin) accounts(ctx context.Context) ([]mockAccount, error) {
	var all []mockAccount
	err := everyPage(ctx, m, "/accounts", url.Values{"limit": {"100"}}, func(p *adminPage[mockAccount], _ []byte) error {
		if len(all)+len(p.Data) > maxAdminAccounts {
			return fmt.Errorf("the mock's admin API: more than %d accounts, more than a mock has", maxAdminAccounts)
		}
		all = append(all, p.Data...)
		return nil
	})
	return all, err
}

// mockContext is a context as GET /_mock/contexts/{id} shows it.
type mockContext struct {
	ID      string `json:"id"`
	Account string `json:"account"`
}

func (m *mockAdmin) context(ctx context.Context, id string) (*mockContext, error) {
	var c mockContext
	if _, err := m.do(ctx, http.MethodGet, "/contexts/"+url.PathEscape(id), nil, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// mockVersion is a version as GET /_mock/contexts/{id}/versions shows it.
type mockVersion struct {
	Version   int                `json:"version"`
	Name      string             `json:"name"`
	Tags      []string           `json:"tags"`
	SizeBytes int                `json:"sizeBytes"`
	CreatedBy string             `json:"createdBy"`
	Changes   contextsvc.Changes `json:"changes"`
}

// version returns the context's first version (order asc) or its latest
// (desc).
func (m *mockAdmin) version(ctx context.Context, id, order string) (*mockVersion, error) {
	var page adminPage[mockVersion]
	if _, err := m.do(ctx, http.MethodGet, "/contexts/"+url.PathEscape(id)+"/versions?limit=1&order="+order, nil, &page); err != nil {
		return nil, err
	}
	if len(page.Data) == 0 {
		return nil, fmt.Errorf("the mock lists no version of %s", id)
	}
	return &page.Data[0], nil
}

// emit records an event of typ with data in account and delivers it.
func (m *mockAdmin) emit(ctx context.Context, typ contextsvc.EventType, data any, account string) (*mockserver.Event, error) {
	var ev mockserver.Event
	body := map[string]any{"type": typ, "data": data, "account": account}
	if _, err := m.do(ctx, http.MethodPost, "/events", body, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// publish fires context.published for a context, as the dashboard does.
func (m *mockAdmin) publish(ctx context.Context, id string) (*mockserver.Event, error) {
	var ev mockserver.Event
	if _, err := m.do(ctx, http.MethodPost, "/contexts/"+url.PathEscape(id)+"/publish", nil, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// deleteWebhook removes a webhook.
func (m *mockAdmin) deleteWebhook(ctx context.Context, id string) error {
	_, err := m.do(ctx, http.MethodDelete, "/webhooks/"+url.PathEscape(id), nil, nil)
	return err
}

// webhookURL is the admin API's URL of a webhook, for the words on how
// to delete it by hand.
func (m *mockAdmin) webhookURL(id string) string { return m.base + "/webhooks/" + url.PathEscape(id) }

// addMockFlags gives a command that works on the mock alone the flags
// that find it: --base-url, and --api-key when the command works on the
// key's account.
func addMockFlags(cmd *cobra.Command, s *streams, withKey bool) *apiFlags {
	f := &apiFlags{s: s, timeout: adminTimeout}
	fs := cmd.Flags()
	fs.StringVar(&f.baseURL, "base-url", "", "the mock's base `URL`, ending in /v1 (default $"+contextsvc.EnvBaseURL+")")
	if withKey {
		fs.StringVar(&f.apiKey, "api-key", "", "an API `key` of the account to work on (default $"+contextsvc.EnvAPIKey+"; a flag's value shows in the process list, the variable's does not)")
	}
	return f
}

// keyMockAccount is the admin API of the mock at the base URL and the
// account of the key in use, for a command on the key's account (name is
// the command, why what the /v1 API lacks for it).
func (f *apiFlags) keyMockAccount(ctx context.Context, name, why string) (*mockAdmin, string, error) {
	key := f.key()
	if key == "" {
		return nil, "", usagef("no API key: set %s (contextsvc mock prints one) or give --api-key: %s works on the key's account", contextsvc.EnvAPIKey, name)
	}
	m, err := f.mockOnly(ctx, name, why)
	if err != nil {
		return nil, "", err
	}
	c, err := f.client()
	if err != nil {
		return nil, "", err
	}
	account, _, err := keyAccount(ctx, m, c, key, "")
	if err != nil {
		return nil, "", err
	}
	return m, account, nil
}

// event is one kept event.
func (m *mockAdmin) event(ctx context.Context, id string) (*mockserver.Event, error) {
	var ev mockserver.Event
	if _, err := m.do(ctx, http.MethodGet, "/events/"+url.PathEscape(id), nil, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// resendResult is the answer of POST /_mock/events/{id}/resend.
type resendResult struct {
	Deliveries []mockserver.Delivery `json:"deliveries"`
}

// resend makes a new delivery of a kept event, to webhookID or to every
// webhook of its account that receives it; it returns the answer as it
// came too.
func (m *mockAdmin) resend(ctx context.Context, eventID, webhookID string) (*resendResult, []byte, error) {
	var body any
	if webhookID != "" {
		body = map[string]string{"webhookId": webhookID}
	}
	var res resendResult
	raw, err := m.do(ctx, http.MethodPost, "/events/"+url.PathEscape(eventID)+"/resend", body, &res)
	if err != nil {
		return nil, nil, err
	}
	return &res, raw, nil
}

// webhook is one webhook, as the admin API shows it.
func (m *mockAdmin) webhook(ctx context.Context, id string) (*mockserver.Webhook, error) {
	var wh mockserver.Webhook
	if _, err := m.do(ctx, http.MethodGet, "/webhooks/"+url.PathEscape(id), nil, &wh); err != nil {
		return nil, err
	}
	return &wh, nil
}

// mockClock is the mock's clock as GET /_mock/clock and POST
// /_mock/clock/advance answer it.
type mockClock struct {
	Now       time.Time `json:"now"`
	Fake      bool      `json:"fake"`
	NextDueAt time.Time `json:"nextDueAt"`
	// Attempts is how many delivery attempts an advance ran.
	Attempts int `json:"attempts"`
}

// clock reads the mock's clock.
func (m *mockAdmin) clock(ctx context.Context) (*mockClock, []byte, error) {
	var c mockClock
	raw, err := m.do(ctx, http.MethodGet, "/clock", nil, &c)
	if err != nil {
		return nil, nil, err
	}
	return &c, raw, nil
}

// advanceClock moves the mock's fake clock by d, or to the next waiting
// delivery attempt (toNextDue), running what falls due.
func (m *mockAdmin) advanceClock(ctx context.Context, d time.Duration, toNextDue bool) (*mockClock, []byte, error) {
	var body any = map[string]any{"duration": d.String()}
	if toNextDue {
		body = map[string]any{"toNextDue": true}
	}
	var c mockClock
	raw, err := m.do(ctx, http.MethodPost, "/clock/advance", body, &c)
	if err != nil {
		return nil, nil, err
	}
	return &c, raw, nil
}

// mockChaos is the mock's chaos mode as GET and PUT /_mock/chaos answer
// it: its settings when on, and its counts.
type mockChaos struct {
	On         bool      `json:"on"`
	Spec       string    `json:"spec"`
	Seed       uint64    `json:"seed"`
	SeedChosen bool      `json:"seedChosen"`
	Since      time.Time `json:"since"`
	Requests   uint64    `json:"requests"`
	Events     uint64    `json:"events"`
	APIErrors  uint64    `json:"apiErrors"`
	Held       uint64    `json:"held"`
	Duplicates uint64    `json:"duplicates"`
}

// chaos reads the chaos mode.
func (m *mockAdmin) chaos(ctx context.Context) (*mockChaos, []byte, error) {
	var c mockChaos
	raw, err := m.do(ctx, http.MethodGet, "/chaos", nil, &c)
	if err != nil {
		return nil, nil, err
	}
	return &c, raw, nil
}

// setChaos sets the chaos mode from a SPEC.
func (m *mockAdmin) setChaos(ctx context.Context, spec string) (*mockChaos, []byte, error) {
	var c mockChaos
	raw, err := m.do(ctx, http.MethodPut, "/chaos", map[string]string{"spec": spec}, &c)
	if err != nil {
		return nil, nil, err
	}
	return &c, raw, nil
}

// stopChaos turns the chaos mode off.
func (m *mockAdmin) stopChaos(ctx context.Context) error {
	_, err := m.do(ctx, http.MethodDelete, "/chaos", nil, nil)
	return err
}

// reset empties the mock.
func (m *mockAdmin) reset(ctx context.Context) error {
	_, err := m.do(ctx, http.MethodPost, "/reset", nil, nil)
	return err
}
