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

	contextsvc "github.com/contextsvc/contextsvc-go"
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
	adminTimeout  = 30 * time.Second
	probeTimeout  = 5 * time.Second
	maxAdminBody  = 4 << 20
	adminRealmTag = "contextsvc-mock admin"
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
	// this command does not have.
	kindLockedMock
)

// mockAdmin is a client of the mock's admin API.
type mockAdmin struct {
	base           string // the admin API's URL, ending in /_mock
	hc             *http.Client
	user, password string
}

// probeServer finds out whether baseURL is served by the mock, from its
// answer to GET /_mock/contract. It never fails: whatever does not answer
// as the mock is a deployment.
func probeServer(ctx context.Context, baseURL string, getenv func(string) string) (*mockAdmin, serverKind) {
	m := &mockAdmin{
		base:     strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1") + "/_mock",
		hc:       &http.Client{Timeout: adminTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		user:     getenv(envAdminUser),
		password: getenv(envAdminPassword),
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := m.request(ctx, http.MethodGet, "/contract", nil)
	if err != nil {
		return nil, kindDeployment
	}
	resp, err := m.hc.Do(req)
	if err != nil {
		return nil, kindDeployment
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch resp.StatusCode {
	case http.StatusOK:
		var c struct {
			Proxy *bool `json:"proxy"`
		}
		if json.Unmarshal(body, &c) == nil && c.Proxy != nil && !*c.Proxy {
			return m, kindMock
		}
	case http.StatusUnauthorized:
		if strings.Contains(resp.Header.Get("WWW-Authenticate"), adminRealmTag) {
			return m, kindLockedMock
		}
	}
	return nil, kindDeployment
}

// lockedMockError says what a mock that asks for admin credentials needs.
func lockedMockError() error {
	return usagef("the mock asks for admin credentials (it was started with -admin-auth-file): set %s and %s", envAdminUser, envAdminPassword)
}

// request builds an admin request to path (from /_mock on).
func (m *mockAdmin) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
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
	if m.user != "" || m.password != "" {
		req.SetBasicAuth(m.user, m.password)
	}
	return req, nil
}

// do sends an admin request and decodes a 2xx answer into out (when not
// nil); it returns the answer's body as it came. Another status is a
// *contextsvc.Error, as the SDK makes it of a /v1 answer.
func (m *mockAdmin) do(ctx context.Context, method, path string, body, out any) ([]byte, error) {
	req, err := m.request(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	resp, err := m.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("the mock's admin API: %s %s: %w", method, "/_mock"+path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAdminBody+1))
	if err != nil {
		return nil, fmt.Errorf("the mock's admin API: %s %s: reading the answer: %w", method, "/_mock"+path, err)
	}
	if len(b) > maxAdminBody {
		return nil, fmt.Errorf("the mock's admin API: %s %s: an answer over %d bytes", method, "/_mock"+path, maxAdminBody)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, adminError(resp, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return nil, fmt.Errorf("the mock's admin API: %s %s: decoding the answer: %w", method, "/_mock"+path, err)
		}
	}
	return b, nil
}

// adminError makes an admin API's error answer a *contextsvc.Error.
func adminError(resp *http.Response, body []byte) error {
	e := &contextsvc.Error{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id"), Attempts: 1, Body: body}
	var doc struct {
		Error struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			Param     string `json:"param"`
			RequestID string `json:"requestId"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &doc) == nil {
		e.Type, e.Message, e.Param = doc.Error.Type, doc.Error.Message, doc.Error.Param
		if doc.Error.RequestID != "" {
			e.RequestID = doc.Error.RequestID
		}
	}
	if e.Message == "" {
		e.Message = strings.ToLower(http.StatusText(resp.StatusCode))
	}
	e.Message = "the mock's admin API: " + e.Message
	return e
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
	cursor := ""
	for range 1000 { // a mock has as many accounts as keys: a bound, not a limit
		path := "/accounts?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Data       []mockAccount `json:"data"`
			HasMore    bool          `json:"hasMore"`
			NextCursor string        `json:"nextCursor"`
		}
		if _, err := m.do(ctx, http.MethodGet, path, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if !page.HasMore || page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	return all, nil
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
	var page struct {
		Data []mockVersion `json:"data"`
	}
	if _, err := m.do(ctx, http.MethodGet, "/contexts/"+url.PathEscape(id)+"/versions?limit=1&order="+order, nil, &page); err != nil {
		return nil, err
	}
	if len(page.Data) == 0 {
		return nil, fmt.Errorf("the mock lists no version of %s", id)
	}
	return &page.Data[0], nil
}

// mockEvent is an event as the admin API answers POST /_mock/events.
type mockEvent struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Account string `json:"account"`
}

// emit records an event of typ with data in account and delivers it.
func (m *mockAdmin) emit(ctx context.Context, typ contextsvc.EventType, data any, account string) (*mockEvent, error) {
	var ev mockEvent
	body := map[string]any{"type": typ, "data": data, "account": account}
	if _, err := m.do(ctx, http.MethodPost, "/events", body, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// publish fires context.published for a context, as the dashboard does.
func (m *mockAdmin) publish(ctx context.Context, id string) (*mockEvent, error) {
	var ev mockEvent
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
