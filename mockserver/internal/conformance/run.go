package conformance

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// Names of what a run creates: every context is named NamePrefix + run id
// + " " + its role and tagged NamePrefix + run id; idempotency keys and the
// webhook's url carry the run id too.
const (
	NamePrefix    = "contextsvc-conform-"
	runQueryParam = "contextsvc-conform-run"
)

// runner is one run.
type runner struct {
	cfg    Config
	base   *url.URL
	spec   *contract.Spec
	send   *sender
	rcv    *receiver
	redact redactor

	runID, tag string
	secret     string // the webhook's signing secret
	missingID  string // a context id nobody created

	mu      sync.Mutex
	created []string // context ids to delete at the end
	hooks   []string // webhook ids the run registered

	// Shared between checks.
	own       string        // a context of the run the error checks address
	merge     *mergeState   // what contexts.update left for contexts.versions
	user      string        // the key's user, as the versions say
	webhook   *webhookCheck // nil without a receiver
	eventsDue []eventDue    // what the receiver must get, and how often
	exports   []exportsOf   // the exports whose events webhooks.once holds to them
}

// check is one check of the contract.
type check struct {
	id, title string
	// creates says what the check creates or changes, which keeps it out
	// of a read-only run ("" when it creates nothing).
	creates string
	// needs says why the check cannot run in this run ("" when it can).
	needs func(r *runner) string
	run   func(c *checker)
}

// Run runs the contract's checks against the server cfg names and returns
// the report. It fails before sending anything when the configuration is
// unusable (an error matching [ErrConfig]) or the receiver cannot listen;
// whatever the server answers goes into the report. When ctx ends, the run
// stops, deletes what it created and returns the report so far
// (Interrupted).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, base, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	spec, err := contract.LoadSpec(cfg.Document)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	r := &runner{cfg: cfg, base: base, spec: spec, runID: cfg.RunID}
	if r.runID == "" {
		r.runID = strings.ToLower(rand.Text()[:10])
	}
	r.tag = NamePrefix + r.runID
	r.secret = "whsec_" + rand.Text()
	r.missingID = contract.PrefixContext + strings.ToLower(rand.Text())
	r.send = &sender{base: base, key: cfg.APIKey, readKey: cfg.ReadKey, unknown: "sk_contextsvc_conform_unknown_" + strings.ToLower(rand.Text()),
		hc: cfg.HTTPClient, limiter: cfg.Limiter}
	receiverURL := ""
	if cfg.ReceiverListen != "" {
		failName := r.name("webhook") // its context.created's first attempt fails, to be retried
		if cfg.SkipRetry {
			failName = ""
		}
		r.rcv, err = startReceiver(cfg.ReceiverListen, r.secret, failName, cfg.Now)
		if err != nil {
			return nil, fmt.Errorf("%w: the webhook receiver cannot listen on %s: %w", ErrConfig, cfg.ReceiverListen, err)
		}
		defer r.rcv.close()
		receiverURL = cfg.ReceiverURL
		if receiverURL == "" {
			receiverURL = r.rcv.url()
		}
		r.webhook = &webhookCheck{url: withRunParam(receiverURL, r.runID)}
	}
	r.redact = newRedactor([]string{cfg.APIKey, cfg.ReadKey, r.secret, r.send.unknown}, receiverURL)

	rep := &Report{BaseURL: base.String(), RunID: r.runID, ReadOnly: cfg.ReadOnly, Started: time.Now()}
	// A server that cannot be reached gets no check: it is said once, why,
	// and every check is skipped for it.
	if rep.Unreachable = r.reach(ctx); rep.Unreachable != nil {
		for _, def := range append(r.checks(), r.acrossChecks()...) {
			rep.Checks = append(rep.Checks, &Check{ID: def.id, Title: def.title, Status: Skipped, Note: "not run: the server cannot be reached"})
		}
		rep.Coverage = r.coverage()
		rep.Requests = r.send.count()
		rep.Duration = time.Since(rep.Started)
		rep.redact(r.redact)
		return rep, nil
	}
	for _, def := range r.checks() {
		res := &Check{ID: def.id, Title: def.title, Status: Passed}
		rep.Checks = append(rep.Checks, res)
		c := &checker{r: r, res: res, ctx: ctx}
		switch {
		case ctx.Err() != nil:
			c.skip("the run was stopped")
		case def.creates != "" && cfg.ReadOnly:
			c.skip(def.creates + ": not in a read-only run")
		case def.needs != nil && def.needs(r) != "":
			c.skip(def.needs(r))
		default:
			def.run(c)
			if ctx.Err() != nil && res.Status != Skipped {
				rep.Interrupted = true
				if len(res.Differences) == 0 {
					c.skip("the run was stopped")
				}
			}
		}
		if len(res.Differences) > 0 {
			res.Status = Failed
		}
		r.progressCheck(res)
	}
	if ctx.Err() != nil {
		rep.Interrupted = true
	}
	rep.LeftBehind = r.cleanup(context.WithoutCancel(ctx))
	// The checks over every answer come last, over all of them.
	for _, def := range r.acrossChecks() {
		res := &Check{ID: def.id, Title: def.title, Status: Passed}
		rep.Checks = append(rep.Checks, res)
		c := &checker{r: r, res: res, ctx: ctx}
		if why := def.needs(r); why != "" {
			c.skip(why)
		} else {
			def.run(c)
		}
		if len(res.Differences) > 0 {
			res.Status = Failed
		}
		r.progressCheck(res)
	}
	rep.Tolerance = tolerance(rep.Checks)
	rep.Coverage = r.coverage()
	rep.Requests = r.send.count()
	rep.Duration = time.Since(rep.Started)
	rep.redact(r.redact)
	return rep, nil
}

// checks lists the checks in the order they run: those that create
// nothing first, then the webhook registration (so that the receiver gets
// the events of everything after it), the contexts, and the deliveries.
func (r *runner) checks() []check {
	return []check{
		{id: "auth", title: "401 unauthorized for each way of not presenting a valid key", run: r.checkErrors(http.StatusUnauthorized)},
		{id: "contexts.list", title: "a page of contexts: its shape, limit and default limit", run: r.checkList},
		{id: "errors.not-found", title: "404 not_found for missing contexts, versions and paths", run: r.checkErrors(http.StatusNotFound)},
		{id: "errors.bad-request", title: "400 invalid_request naming the field or parameter at fault", run: r.checkErrors(http.StatusBadRequest)},
		{id: "errors.method-not-allowed", title: "405 method_not_allowed with Allow", run: r.checkErrors(http.StatusMethodNotAllowed)},
		{id: "errors.forbidden", title: "403 forbidden for a read-scope key's writes; its reads served", run: r.checkForbidden,
			needs: func(r *runner) string {
				if r.cfg.ReadKey == "" {
					return "needs a key of read scope (-read-key)"
				}
				return ""
			}},
		{id: "errors.payload-too-large", title: "413 payload_too_large for a body over 2 MiB", creates: "sends a create, which a server that does not refuse its 2 MiB body would carry out", run: r.checkErrors(http.StatusRequestEntityTooLarge)},
		{id: "webhooks.register", title: "webhook registration: its answer, the secret never returned", creates: "registers a webhook (which the /v1 API cannot delete) and creates a context", run: r.checkRegister, needs: needsReceiver},
		{id: "contexts.create", title: "create: 201 with the context at version 1, defaults, tags deduplicated; read back", creates: "creates a context", run: r.checkCreate},
		{id: "errors.validation", title: "400 invalid_request with param for each field rule of create, update, export and registration; 404 for a version that never existed", creates: "creates the context its refused updates and exports address", run: r.checkValidation},
		{id: "contexts.update", title: "update merges: fields present replace, absent stay; tags [] clears; no change, no version", creates: "creates a context and updates it", run: r.checkUpdate},
		{id: "contexts.versions", title: "versions: one per change, oldest first, with what changed; paged", creates: "reads the versions of the context contexts.update creates", run: r.checkVersions},
		{id: "contexts.paging", title: "list paging: limit, cursor, hasMore, nextCursor, tag filters", creates: "creates three contexts to page through", run: r.checkPaging},
		{id: "contexts.export", title: "export in every format: content type, file name, content; earlier versions; PDF read back", creates: "creates a context and updates it, to export two versions", run: r.checkExport},
		{id: "contexts.idempotency", title: "idempotency keys: a repeat is replayed, not run again; the key with another body is a 400", creates: "creates a context with an idempotency key", run: r.checkIdempotency},
		{id: "contexts.delete", title: "delete: the deletion result, then 404 on every endpoint", creates: "creates a context and deletes it", run: r.checkDelete},
		{id: "webhooks.deliveries", title: "deliveries: signed (the SDK verifies), headers, envelope and data of each event", creates: "needs the webhook webhooks.register registers, and changes the context it creates", run: r.checkDeliveries, needs: needsReceiver},
		{id: "webhooks.retry", title: "a failed delivery attempt is retried after 1 minute, the same event signed anew", creates: "needs the webhook webhooks.register registers, and the delivery of the context it creates", run: r.checkRetry,
			needs: func(r *runner) string {
				if why := needsReceiver(r); why != "" {
					return why
				}
				if r.cfg.SkipRetry {
					return "skipped on request (-skip-retry)"
				}
				return ""
			}},
		{id: "webhooks.once", title: "each change and export fires its events once; an idempotent repeat and an update that changes nothing fire none", creates: "counts the events of the contexts the other checks create", run: r.checkOnce, needs: needsReceiver},
		{id: "ratelimit.exceeded", title: "429 rate_limited with Retry-After once the key's bucket is empty", run: r.checkRateLimited,
			needs: func(r *runner) string {
				switch {
				case r.cfg.Unlimited:
					return "the key has no rate limit"
				case !r.cfg.Provoke429:
					return "spends the key's whole bucket: only with -provoke-429"
				}
				return ""
			}},
	}
}

func needsReceiver(r *runner) string {
	if r.rcv == nil {
		return "needs a webhook receiver the server can reach (-receiver-listen, -receiver-url)"
	}
	return ""
}

// name is the name of a context the run creates for role.
func (r *runner) name(role string) string { return r.tag + " " + role }

// keep records a context the run created, to delete at the end.
func (r *runner) keep(id string) {
	if id == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.created, id) {
		r.created = append(r.created, id)
	}
}

// keepHook records a webhook the run registered.
func (r *runner) keepHook(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id != "" && !slices.Contains(r.hooks, id) {
		r.hooks = append(r.hooks, id)
	}
}

// keepAnswer records what a 2xx answer to a create or registration
// created, wherever it was expected or not.
func (r *runner) keepAnswer(ex *contract.Exchange) {
	if ex == nil || !is2xx(ex.Status) || ex.Method != http.MethodPost && ex.Method != http.MethodPut {
		return
	}
	var v struct {
		ID string `json:"id"`
	}
	if ok := decodeInto(ex.Body, &v); !ok {
		return
	}
	switch {
	case strings.HasPrefix(ex.Path, "/v1/webhooks"):
		r.keepHook(v.ID)
	case strings.HasPrefix(ex.Path, "/v1/contexts"):
		r.keep(v.ID)
	}
}

func (r *runner) progressCheck(res *Check) {
	if res.Note == "" {
		r.progress("%-7s %s", res.Status, res.ID)
	} else {
		r.progress("%-7s %s (%s)", res.Status, res.ID, res.Note)
	}
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintln(r.cfg.Progress, r.redact.text(strings.TrimSpace(fmt.Sprintf(format, args...))))
}

// coverage counts the requests per /v1 operation.
func (r *runner) coverage() []Coverage {
	var out []Coverage
	for _, op := range contract.Operations() {
		cv := Coverage{Operation: op.ID, Statuses: []int{}}
		for _, ex := range r.send.all() {
			if r.spec.Operation(ex.Method, ex.Path) != op.ID {
				continue
			}
			cv.Requests++
			if !slices.Contains(cv.Statuses, ex.Status) {
				cv.Statuses = append(cv.Statuses, ex.Status)
			}
		}
		slices.Sort(cv.Statuses)
		out = append(out, cv)
	}
	return out
}

// withRunParam adds the run's query parameter to the receiver URL, so the
// webhook says which run registered it.
func withRunParam(raw, runID string) string {
	sep := "?"
	if strings.Contains(raw, "?") {
		sep = "&"
	}
	return raw + sep + runQueryParam + "=" + runID
}
