// Package mockserver is an in-memory reference implementation of the
// Context Management Service's /v1 API, for tests and local development.
//
// It follows the project's API contract exactly (shapes, statuses, headers,
// validation, error bodies), and its embedded OpenAPI document (served at
// GET /_mock/openapi.yaml, also [OpenAPI]) states all of it; the package's
// own tests check every response against that document.
//
// In a test, two lines give a running server and a key:
//
//	ts := mockserver.NewTestServer(t)
//	// ts.URL ends in /v1; send "Authorization: Bearer " + ts.APIKey
//
// The command contextsvc-mock runs the same server on its own. The guides
// docs/mockserver.md (tests, the fake clock, faults, the state file, the
// command) and docs/dashboard.md in the repository walk through it; what
// follows is the reference.
//
// # Keys, accounts and limits
//
// Each [Key] belongs to an account and a user and has a plan and a scope.
// Keys of one account see the same contexts and webhooks; another account's
// context answers 404 exactly as a missing one, on every endpoint, and an
// account's events are delivered to its own webhooks only. An account is
// named (1 to 64 characters of A-Z, a-z, 0-9, '_', '.', '-'; [ValidAccount])
// and its name is its id; the command's -key KEY[:plan[:scope[:account]]]
// ([ParseKey]) names it, and keys naming none share [DefaultAccount]. A
// key's user, unless given, is derived from its account's name
// ([AccountUser]), so ids and createdBy… are the same at every start.
// Each key has a token bucket
// (golang.org/x/time/rate) on the server's [Clock]: capacity the plan's
// burst, refill the per-minute limit / 60 per second. A key on
// [PlanUnlimited] is never limited and gets no X-RateLimit-* headers.
//
// # Decisions where the contract leaves room
//
//   - The text before a document's first heading is the section
//     "(preamble)" only when it holds at least one block. Only top-level
//     headings split sections; a heading inside a block quote or list item
//     belongs to its section's body. Sections are matched between versions
//     by heading text and occurrence; each name is listed once.
//   - A word is a run of non-space characters of the rendered text holding
//     at least one letter or digit.
//   - The limit of 20 tags applies after duplicates are dropped.
//   - An update that changes only the name or tags records a version whose
//     changes are {"sections_modified":[],"word_count_delta":0}.
//   - Cursors are opaque, carry a MAC keyed per server, and are bound to
//     their list: its kind, account, context and filters (tags in any
//     order). A versions cursor, or one of another tag filter or context,
//     is a 400.
//   - A repeated limit, cursor, format or version query parameter is a 400
//     (limit, cursor) or uses the first value (format, version).
//   - Export: the markdown format is the stored text as is; text is the
//     rendered plain text with "- " and "N. " list markers; html shows raw
//     HTML escaped (as text, inline or in a <pre> block), so it never runs;
//     text and pdf leave it out. The PDF embeds the Go fonts (Latin,
//     Greek, Cyrillic, symbols) and Droid Sans Fallback (Chinese, Japanese
//     kana, Korean Hangul), so every character they cover survives; any
//     other (emoji, Arabic, Hebrew, Indic and Thai scripts, CJK Extension
//     A, anything beyond U+FFFF) prints as U+FFFD, and invisible format
//     characters (joiners, variation selectors, soft hyphens) as nothing.
//     The file name comes twice (RFC 6266): filename, the ASCII fallback
//     "<slug>-v<N>.<ext>" with Latin letters transliterated
//     ("unicode-strasse-v1.pdf"), and filename*, the name itself as a safe
//     file name, UTF-8 ("Ünïcödé Straße-v1.pdf": no / \ < > : " | ? *,
//     control or format characters, trimmed, at most 200 bytes).
//   - The history is bounded (see "What is kept, and for how long"); the
//     Go lists ([Server.Events], [Server.Deliveries]) return all that is
//     kept, the admin lists page through it.
//   - A string field may not hold control characters (Unicode Cc; content
//     may hold tab, newline and carriage return) nor a lone UTF-16
//     surrogate escape ("\ud800", which encoding/json would store as
//     U+FFFD): either is a 400 naming the field. A malformed query string
//     (a bad percent-escape, a ';') is a 400 naming the parameter, where
//     net/url would silently drop it.
//   - A webhook url must match the document's grammar: https (or http to
//     localhost, 127.0.0.0/8 or [::1]), printable ASCII, well-formed %XX
//     escapes; other spellings of loopback ([::ffff:127.0.0.1]) are
//     refused.
//   - Markdown is parsed in time linear in its length: by goldmark, with
//     links, emphasis, code spans and link reference definitions parsed by
//     this package (its internal markdown package). It renders as goldmark does (every
//     CommonMark spec example alike) but for: block quotes and list items
//     nest at most 32 deep, a marker that would open a 33rd level being
//     text (CommonMark sets no limit); link destinations nest parentheses
//     at most 32 deep and, in pointy brackets, hold no '<' (CommonMark's
//     rules, which goldmark lacks); a link reference definition's title
//     followed by other text is no title (likewise). PDFs over 100 pages
//     are not compressed: fpdf's per-page zlib set-up would double their
//     time.
//   - All the keys of an account that name no user are one user, derived
//     from the account's name alone (never from a token).
//   - Webhooks are managed through the admin API only (the reference shows
//     no /v1 endpoint): a delivery attempt reads its webhook's url and
//     secret when it starts, so a change applies to retries of earlier
//     events too, and a secret rotates in place with no second webhook.
//     Changing the events a webhook receives leaves deliveries of earlier
//     events alone. Deactivating or deleting a webhook ends its waiting
//     deliveries at once as failed ([Delivery].FailureReason says why);
//     one whose attempt is running ends with it (failed, unless the attempt
//     succeeded); such deliveries are kept and, the webhook active again,
//     can be redelivered. An account holds at most
//     [MaxWebhooksPerAccount] (100) webhooks; past it a registration is a
//     400 without param, not a 409, which the SDK would retry.
//   - The admin publish action (POST /_mock/contexts/{id}/publish) is
//     admin-wide: it takes any account's context, and its event is that
//     account's, publishedBy the user of its keys.
//
// # What is kept, and for how long
//
// A mock left running for days, or loaded at full speed, stays within
// bounds:
//
//   - Contexts and their versions are data: kept until deleted (a deleted
//     context leaves nothing behind) or [Server.Reset], and across restarts
//     with a state file (see "State that survives a restart"). Each
//     version's text is held once; the JSON of a read is encoded from it.
//   - Events: the last [DefaultHistoryLimit] (10,000), or as many as
//     [WithHistoryLimit] (the command's -history-limit) says, and at most
//     [MaxEventHistoryBytes] (64 MiB) of them, their data included; past
//     either the oldest go first.
//   - Deliveries: every pending one, and the last history-limit deliveries
//     to finish (succeeded or failed); those that finished first go first,
//     with their event's body once no kept delivery needs it. At most
//     [DefaultDeliveryBacklog] (20,000; [WithDeliveryBacklog]) may wait for
//     their first attempt: past that, a request that fires an event waits
//     for room, so an API faster than its receivers slows to their pace.
//     The wait ends with the request: a delivery whose request was given
//     up first is kept as failed, with no attempt and the reason.
//     At most [DefaultRetryLimit] (100,000; [WithRetryLimit]) may wait for
//     a retry: a delivery whose attempt fails past that gets none and is
//     kept as failed, saying why (a receiver that answers the first
//     attempt never needs the room); those waiting are kept until their
//     schedule ends.
//   - Webhooks: kept until deleted or [Server.Reset], at most
//     [MaxWebhooksPerAccount] (100) per account. Faults: at most
//     [MaxFaults] (1,000) active.
//   - Across a restart, with a state file: contexts with all their
//     versions, webhooks with their secrets, and the pending deliveries
//     with the events they send; not the event log, finished deliveries,
//     faults, idempotency keys or rate-limit buckets.
//
// With the defaults, a full-speed load with two webhooks and an
// Idempotency-Key on every POST holds the command at about 140 MB, flat
// for ten minutes (BENCHMARKS.md, long runs). [Server.Reset] (POST
// /_mock/reset) empties everything (the state file too, at its next
// write).
//
// # State that survives a restart
//
// [WithStateFile] (the command's -state-file) keeps the state in a file:
// [Open] loads it (a missing file is a first start), the server writes it
// at most every [WithStateInterval] (-state-interval, default 10 s) while
// the state changes, and [Server.Close] (the command's graceful shutdown)
// writes it a last time. Each write replaces the file atomically: a
// temporary file in the same directory is written, synced and renamed over
// it, then the directory is synced, so a crash or kill -9 at any moment
// leaves the previous file or the new one, whole (the next start removes a
// half-written temporary file). The file is mode 0600: it holds webhook
// secrets. A file that cannot be read or is not a valid state document
// (corrupt, cut short, of a newer format) stops the start: Open returns a
// [*StateFileError] naming the file and what is wrong (wrapping a
// [*StateError] with its path in the document, and [ErrStateTooNew] for a
// newer format), and the file is left as it is; [New] panics with it. One
// server uses a file at a time: a second server's Open of it, by any name
// or symbolic link, fails with [ErrStateFileInUse] until the first is
// closed or its process ends (a lock on FILE.lock beside the file a link
// reaches; writes go through the link, which stays one). The time never
// goes back across a restart: a [FakeClock] resumes where the file's
// clock stood, and a wall clock behind it refuses the file
// ([ErrStateClockAhead]).
//
// The file is a state document, which [Server.SaveState] writes and
// [Server.LoadState] reads, and GET and PUT /_mock/state download and
// replace (PUT takes up to 256 MiB; tests seed fixtures with it). It is
// JSON, stated field by field by the MockState schema of the OpenAPI
// document:
//
//	{"format":"contextsvc-mock-state","version":1,"savedAt":…,"clock":"fake","cursorSalt":…,
//	 "eventSeq":…,"deliverySeq":…,"webhookSeq":…,
//	 "accounts":[{"id":"default","contextSeq":…,
//	   "contexts":[{"id":"ctx_…","seq":…,"versions":[{"version":1,"name":…,"content":…,"tags":[…],
//	     "createdAt":…,"createdBy":"user_…","changes":{…}},…]},…],
//	   "webhooks":[{"id":"wh_…","seq":…,"url":…,"events":[…],"secret":…,"createdAt":…,"active":true},…]},…],
//	 "events":[{"id":"evt_…","type":…,"timestamp":…,"data":{…}},…],
//	 "deliveries":[{"id":"dlv_…","seq":…,"eventId":…,"webhookId":…,"url":…,"createdAt":…,
//	   "nextAttemptAt":…,"retries":…,"attempts":[…]},…]}
//
// format and version come first; version is [StateFormatVersion], and a
// server refuses a newer one rather than read it wrongly. savedAt is the
// server's clock when it was written, after every time it holds, and
// clock says "fake" when that clock was not the wall clock (absent: the
// wall clock, as before the field was). A context is its
// versions (its current name, content and tags are its last version's),
// so each text is written once; the server writes one context (webhook,
// event, delivery) to a line. What keeps ids working: contexts, webhooks
// and deliveries keep their ids and their places in creation order (seq),
// the counters go on (contextSeq, webhookSeq, deliverySeq, eventSeq), and
// cursorSalt is the key of the cursors' MACs, so a list cursor issued
// before a restart pages the list after it. A pending delivery keeps its
// attempts (numbering continues), the retries of the schedule it has used
// (the schedule continues) and when its next attempt is due; the events
// are the envelopes the pending deliveries send, byte for byte, and each
// attempt reads its webhook's url and secret as they are then. An attempt
// running when the file was written is due again after a crash (receivers
// deduplicate by event id); a graceful stop lets it finish first. The
// idempotency keys are not kept: a POST repeated across a restart runs
// again.
//
// Loading a document (LoadState, PUT /_mock/state, the file at start),
// [Server.Reset] and every copy of the state (SaveState, GET /_mock/state,
// the file's writes) exclude one another: a copy is one whole state, as
// loaded or reset, never half of one, and a load's webhooks come with
// their pending deliveries. A document is read and checked before the
// load takes its turn, so requests wait only while it is installed.
//
// A document is read as a stream (with the streaming decoder of
// github.com/go-json-experiment/json: a name given twice, invalid UTF-8, a
// lone surrogate escape, an unknown field or a null are refused, with the
// path of the field and, for broken JSON, the byte offset) and held to the
// API's rules field by field: names, content and tags as on create
// (limits, control characters), webhook urls, events and secrets as on
// registration (https-only too, on a server started so), ids and times
// in the API's forms; ids unique; versions and attempts numbered 1, 2,
// 3…; every delivery's event and webhook present, the webhook active.
// Absent fields a fixture may leave out: a version's content (""), tags
// ([]) and changes (worked out as the updates would have), seq (the one
// before plus one), a delivery's url (its webhook's), nextAttemptAt (now)
// and retries (its attempts), and the counters. A document's accounts must
// be the server's (a key's); a state file at start may also hold accounts
// no key has, which are kept, unreachable through /v1, and written back
// (a warning says which). Loading works out each context's Markdown
// analysis (for its next update's changes) on every core. 100,000
// contexts of three 1 KB versions (a 348 MB file) load in about 3 s and
// save in about 1 s on two cores, holding 450 MB of heap once loaded
// (BENCHMARKS.md).
//
// # Time-outs
//
// A client has [DefaultReadHeaderTimeout] (10 s) to send a request's
// headers and [DefaultReadBodyTimeout] (30 s) to send its body, and a
// keep-alive connection is closed after [DefaultIdleTimeout] (2 min)
// without a request ([WithReadHeaderTimeout], [WithReadBodyTimeout],
// [WithIdleTimeout]; the command's flags of the same names). The body
// time-out is enforced by the Server itself, under any http.Server; the
// others are set on the http.Server of [Server.HTTPServer], which
// [NewTestServer] and the command use. Each delivery attempt has its own
// time-out ([WithDeliveryTimeout]).
//
// # Events and webhook deliveries
//
// Every operation that fires an event appends it to the server's log
// ([Server.Events]) with the exact envelope bytes a delivery sends;
// [Server.Publish] fires context.published and [Server.EmitEvent] any
// type (team.member.added, team.member.removed…), which no public endpoint
// does.
//
// Each event is delivered to every active webhook of its account
// subscribed to its type: a signed POST per attempt, retried after 1 min,
// 5 min, 30 min, 2 h and 24 h ([WithRetrySchedule] changes that), each
// attempt bounded by [WithDeliveryTimeout] in real time. A 3xx is not
// followed. The schedule runs on the server's [Clock]: with a [FakeClock],
// a test advances it instead of sleeping. An advance catches up as a real
// clock would: it stops at each time an attempt falls due within the jump,
// in order, runs the attempts due then on the server's senders (each
// attempt's StartedAt is its due time) and waits for them, so the retries
// they schedule within the jump run too, and returns once all of it has
// run. The cost is that of the attempts, not of the jump's length:
//
//	clock := mockserver.NewFakeClock(start)
//	ts := mockserver.NewTestServer(t, mockserver.WithClock(clock))
//	// register a webhook to a receiver that is down, create a context, then:
//	clock.Advance(27 * time.Hour) // attempts at +0, +1m, +6m, +36m, +2h36m, +26h36m
//
// Advances from several goroutines run one after another, each from where
// the last ended; [FakeClock.AdvanceContext] stops at a due time when its
// context ends. [Server.WaitIdle] (or [Server.WaitForDelivery]) waits for
// the attempts due without an advance, such as an event's first.
//
// [Server.Deliveries], [Server.Delivery] and [Server.Redeliver] inspect and
// retry deliveries; [Server.Close] stops them gracefully.
// [Server.Webhooks], [Server.AccountWebhooks] and [Server.Webhook] show the
// webhooks (never a secret); [Server.UpdateWebhook] changes one in place
// (url, events, active, secret: each attempt uses the url and secret the
// webhook has when it starts, retries included) and [Server.DeleteWebhook]
// removes one, ending its waiting deliveries as failed.
//
// A receiver in the same test as a server on a [FakeClock] reads the
// server's clock, contextsvc.WithWebhookClock(clock.Now): once the fake
// clock is more than 5 minutes ahead of real time (the receiver's allowed
// skew), a receiver on the real clock refuses every delivery as "in the
// future".
//
// # Tracing and metrics
//
// [WithTracerProvider] traces the server with OpenTelemetry: a server span
// for every request (/v1 and admin, named by method and route template,
// continuing the traceparent the request carries), a producer span for
// every event, and a client span for every delivery attempt, a child of
// its event's span, whose traceparent the attempt sends. With
// contextsvcotel on the client and the receiver, one trace holds the
// client's call, the mock's handling, every delivery attempt (retries
// included) and the receiver's handling. [WithMeterProvider] adds
// http.server.request.duration, http.client.request.duration (the
// attempts) and contextsvc.mock.events; [WithPropagator] changes how the
// context travels (W3C Trace Context by default). Without them nothing is
// traced or measured, and the server costs what it did. An attempt keeps
// its trace id ([DeliveryAttempt].TraceID), which the admin API and the
// dashboard show. The command's -otel exports both over OTLP/HTTP.
//
// # Admin API
//
// Unless [WithAdmin](false), the server also answers under /_mock/, with no
// key (and, with [WithAdminAuth], a user name and password; see "Exposing
// the admin routes" below): the event log (and emitting an event), the
// deliveries with their attempts (and redelivering one), the webhooks
// (changed and deleted in place), publishing, the clock (read, and
// advanced when fake), reset, the faults, the state document (GET and PUT
// /_mock/state), the validating proxy's findings, and what the dashboard
// reads (accounts with their keys masked by [MaskToken], every account's
// contexts and their versions, the diff of two, a summary, the stream of
// changes). Each route is a thin layer over a method of [Server]. The
// embedded OpenAPI document (GET /_mock/openapi.yaml) describes every
// route and every rule the server enforces, what no schema can say
// (content's byte limit, tags counted after duplicates are dropped, lone
// surrogates, the server's accounts, https-only) in words; the guide
// docs/mockserver.md lists them. The lists are paged like the /v1 lists
// (limit 1 to 100, default 20; an opaque cursor; hasMore and nextCursor;
// order=desc for newest first), and a page costs the same at any depth.
// Admin errors use the contract's error body, with two types of the
// mock's own: conflict (409) and unavailable (503).
//
// # Exposing the admin routes
//
// The admin routes read and change every account's data (webhook secrets
// included, GET /_mock/state), and three checks guard them, in this order,
// on every /_mock/ path (the dashboard, its files and its stream
// included):
//
//   - The Host: a request whose Host is not an IP address, localhost, a
//     name under .localhost or a name given to [WithAdminHosts] (the
//     command's -admin-host) is a 403 naming the flag that would allow
//     it: a page elsewhere could otherwise point its own name at the mock
//     (DNS rebinding) and, being same-origin to the browser, read the
//     state and act.
//   - The origin: a request a browser sends from a page of another
//     origin, a read as much as a write, is a 403 (Sec-Fetch-Site, else
//     Origin against Host, as http.CrossOriginProtection decides for
//     every method): a page elsewhere can neither act on the mock through
//     its visitor's browser, nor make it serialise its state again and
//     again with an <img>, nor hold the streams' 64 slots. A request
//     without those headers (curl, Go's client, a test) passes, and so
//     does a top-level navigation to the dashboard's page (a link
//     followed from another site), whose own requests are same-origin.
//   - The credentials, with [WithAdminAuth] (the command's
//     -admin-auth-file): HTTP Basic against an htpasswd file of
//     user:bcrypt-hash lines, as browsers prompt for it and curl -u sends
//     it; a request without them or with wrong ones is a 401 with a Basic
//     challenge and changes nothing. A password is checked once with
//     bcrypt, then remembered by a keyed hash; new and wrong ones are
//     checked one at a time, at most 20 a second, 16 waiting (past that a
//     429), so guesses cost what the hash's cost says and cannot take the
//     CPU. The /v1 API keeps its bearer keys.
//
// The command refuses to start with the admin routes on an -addr beyond
// loopback and no -admin-auth-file, unless -admin-insecure says so.
//
// # Dashboard
//
// GET /_mock/ui/ (served with the admin routes, off with them) is a web
// page for a developer watching the mock: every account, context (its
// versions and their diff), webhook, event and delivery (each attempt,
// the next retry), the clock and the faults, with the admin API's actions
// (redeliver, advance, emit, publish, reset…). It is live without polling
// (GET /_mock/stream sends the server's changes as Server-Sent Events,
// each subscriber's buffer bounded), paged (fast with 100,000
// deliveries), embedded (no build step; it loads nothing from elsewhere),
// and writes every string as text under a Content-Security-Policy with
// Trusted Types. It asks for the admin routes' credentials when they are
// set. The guide docs/dashboard.md shows it.
//
// # Faults
//
// [Server.AddFault] (POST /_mock/faults) makes the next matching /v1
// requests answer a status (500, 429 with Retry-After, 503…) with the
// contract's error body of that type, or wait a latency first, so a
// client's retry handling can be tested. A fault applies after
// authentication and the rate limit, as a real server's failure would: a
// request without a valid key still gets its 401, and a faulted request
// has used a token of its bucket. Latency is real time even on a fake
// clock, and a request canceled while waiting is dropped. Admin requests
// are never faulted. A fault's [FaultMode] can instead let the request run
// and then lose its answer: [FaultAfter] answers a 5xx in its place,
// [FaultDrop] closes the connection unanswered, as when a proxy or the
// network fails after the service acted.
//
// # Idempotency keys
//
// A POST carrying Idempotency-Key (1 to 255 printable ASCII characters) is
// run once per account and key: for [IdempotencyTTL] (24 hours on the
// server's clock) the same request again gets the stored answer (same
// status and body, a new X-Request-Id) with Idempotent-Replayed: true, and
// creates nothing and fires no event; while the first still runs it is a
// 409 conflict; the key with another method, path or body is a 400 with
// param "Idempotency-Key". A 5xx is not stored, so its repeat runs afresh;
// the operation's other answers, 4xx included, are. Answers given before
// the operation runs (401, 403, 413, 429, an injected fault in mode
// instead) are never stored. The store is bounded: at most
// [MaxIdempotencyKeys] keys and [MaxIdempotencyBytes] of stored answers,
// the oldest key forgotten first; [Server.Reset] empties it.
//
// # A validating proxy
//
// With [WithUpstream] (the command's -upstream URL) the server serves no
// /v1 of its own: it forwards every /v1 request to a deployment of the
// service, the caller's Authorization as it is, streams the answer back,
// and holds the request and the answer to the OpenAPI document. Each
// mismatch is logged at Warn with the rule of the document it breaks,
// kept with the SDK's verdict on the answer ([Server.ContractFindings],
// GET /_mock/contract/mismatches, the dashboard's Contract view) and
// counted per operation ([Server.ContractCounts], GET /_mock/contract).
// A request the document forbids that the upstream refuses with a 4xx is
// counted as refused, not as a mismatch. At most [MaxValidatedBody] of a
// body is buffered (a larger one streams through unvalidated, and is
// counted so); the findings are kept as the history is, at most
// [MaxContractBytes] of them; an upstream that does not answer is a 502
// with the contract's error body, and one that does not begin its answer
// within [WithUpstreamTimeout] a 504. API keys, webhook secrets, the
// secrets of receiver URLs and the query's secret parameters are masked,
// by where they are, in every finding and log line.
//
// # How it is built
//
// This package is the public API, the /v1 handlers and the wiring; the
// parts are internal packages, one job each, none importing this one:
// store (accounts, contexts, versions, webhooks), events (the event log),
// delivery (webhook deliveries, their retries and history), faults,
// idempotency, changes (what the dashboard's stream sends), state (the
// state document) and statefile (its file, written atomically and
// locked), export and pdf, markdown, clock (the [FakeClock]'s engine),
// proxy (the validating proxy), and adminapi (everything under /_mock/), with access (the admin
// routes' Host, cross-site and credentials checks) and dashboard (the
// page), over what they share: httpapi (errors, answers, bodies,
// cursors), rules (the contract's field rules) and jsonwire. Every
// request passes through one function before it is routed, /v1 and
// admin alike, and every delivery attempt through one method of the
// delivery engine. docs/mockserver-architecture.md in the repository
// draws the packages and what flows between them: a request, an event,
// a delivery, a save.
package mockserver
