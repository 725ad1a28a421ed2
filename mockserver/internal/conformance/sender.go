package conformance

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// Bounds of what the run keeps of each exchange.
const (
	// maxAnswer is the largest answer read: a default page of 20 contexts
	// of 1,000,000 bytes of content each, JSON-escaped, fits.
	maxAnswer = 64 << 20
	// maxKeptRequestBody is how much of a request body an exchange keeps
	// (the 413 probe sends 2 MiB).
	maxKeptRequestBody = 64 << 10
	// maxExchanges and maxKeptAnswers bound the exchanges kept for the
	// checks over the whole run (a run sends a few hundred, mostly small):
	// past maxKeptAnswers bytes of answers, an exchange is kept with its
	// answer cut to maxKeptRequestBody.
	maxExchanges   = 10_000
	maxKeptAnswers = 64 << 20
)

// userAgent names the runner and the SDK version whose contract it checks.
const userAgent = "contextsvc-conform (" + contextsvc.DefaultUserAgent + ")"

// request is one request of a check.
type request struct {
	method string
	// path is relative to the base URL and starts with "/", with any query
	// ("/contexts?limit=1").
	path   string
	body   []byte
	auth   contract.Auth
	header map[string]string
	// unpaced skips the limiter (the 429 probe).
	unpaced bool
	// untracked keeps no exchange: the answer is held to nothing (the
	// probe of whether the server can be reached).
	untracked bool
}

// String shows the request as the report does: method, path as the
// document names it, and the body cut short.
func (r request) show(basePath string) string {
	p := contract.APIPath(basePath, basePath+r.path)
	s := r.method + " " + p
	if v := r.header[contract.HeaderIdempotencyKey]; v != "" {
		s += " (Idempotency-Key " + v + ")"
	}
	if len(r.body) > 0 {
		s += " " + excerpt(r.body, 300)
	}
	return s
}

// sender sends the run's requests, paced, and keeps each exchange.
type sender struct {
	base    *url.URL
	key     string
	readKey string
	unknown string // a key no server issued
	hc      *http.Client
	limiter contextsvc.Limiter

	mu        sync.Mutex
	exchanges []*contract.Exchange
	kept      int // bytes of answers in exchanges
	sent      int
}

// errNoReadKey is a request with AuthReadKey in a run without one.
var errNoReadKey = errors.New("no read-scope key")

// do sends r and returns the exchange, or an error when no answer came.
func (s *sender) do(ctx context.Context, r request) (*contract.Exchange, error) {
	u := strings.TrimSuffix(s.base.String(), "/") + r.path
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// What the SDK sends: JSON, but any document from an export.
	if strings.Contains(r.path, "/export") {
		req.Header.Set("Accept", "*/*")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", userAgent)
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	shown := req.Header.Clone() // never with the Authorization header
	if r.body != nil {
		shown.Set("Content-Length", strconv.Itoa(len(r.body)))
	}
	switch r.auth {
	case contract.AuthKey:
		req.Header.Set("Authorization", "Bearer "+s.key)
	case contract.AuthBasic:
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("contextsvc-conform:not-a-key")))
	case contract.AuthUnknown:
		req.Header.Set("Authorization", "Bearer "+s.unknown)
	case contract.AuthReadKey:
		if s.readKey == "" {
			return nil, errNoReadKey
		}
		req.Header.Set("Authorization", "Bearer "+s.readKey)
	}
	if !r.unpaced && s.limiter != nil {
		if err := s.limiter.Wait(ctx); err != nil {
			return nil, fmt.Errorf("waiting for the rate limiter: %w", err)
		}
	}
	s.mu.Lock()
	s.sent++
	s.mu.Unlock()
	resp, err := s.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the report already
		}
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(answer) > maxAnswer {
		return nil, fmt.Errorf("the answer is over %d MiB", maxAnswer>>20)
	}
	kept := r.body
	if len(kept) > maxKeptRequestBody {
		kept = kept[:maxKeptRequestBody]
	}
	ex := &contract.Exchange{
		Method:        r.method,
		Path:          contract.APIPath(s.base.Path, req.URL.Path),
		RawQuery:      req.URL.RawQuery,
		RequestHeader: shown,
		RequestBody:   kept,
		Status:        resp.StatusCode,
		Header:        resp.Header,
		Body:          answer,
	}
	if r.untracked {
		return ex, nil
	}
	s.mu.Lock()
	if len(s.exchanges) < maxExchanges {
		k := ex
		if s.kept+len(ex.Body) > maxKeptAnswers && len(ex.Body) > maxKeptRequestBody {
			cp := *ex
			cp.Body = ex.Body[:maxKeptRequestBody:maxKeptRequestBody]
			k = &cp
		}
		s.kept += len(k.Body)
		s.exchanges = append(s.exchanges, k)
	}
	s.mu.Unlock()
	return ex, nil
}

// all returns the exchanges kept so far.
func (s *sender) all() []*contract.Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*contract.Exchange(nil), s.exchanges...)
}

func (s *sender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// excerpt shows a body in one line of at most n bytes.
func excerpt(b []byte, n int) string {
	if !utf8.Valid(b) {
		return fmt.Sprintf("(%d bytes, not text)", len(b))
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return s
}

// shownAnswer is an answer as the report shows it: status and body.
func shownAnswer(ex *contract.Exchange) string {
	s := fmt.Sprintf("%d", ex.Status)
	ct := ex.Header.Get("Content-Type")
	switch {
	case len(ex.Body) == 0:
		s += " (no body)"
	case strings.HasPrefix(ct, "application/pdf"):
		s += fmt.Sprintf(" (%d bytes of %s)", len(ex.Body), ct)
	default:
		s += " " + excerpt(ex.Body, 300)
	}
	return s
}
