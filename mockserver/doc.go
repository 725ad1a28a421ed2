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
// # Keys, accounts and limits
//
// Each [Key] belongs to an account and a user and has a plan and a scope.
// Keys of one account see the same contexts and webhooks; another account's
// context answers 404 exactly as a missing one. Each key has a token bucket
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
//     their list (a versions cursor is a 400 on the contexts list).
//   - A repeated limit, cursor, format or version query parameter is a 400
//     (limit, cursor) or uses the first value (format, version).
//   - Export: the markdown format is the stored text as is; text is the
//     rendered plain text with "- " and "N. " list markers; html shows raw
//     HTML escaped (as text, inline or in a <pre> block), so it never runs;
//     text and pdf leave it out. The PDF uses core fonts, so characters
//     outside cp1252 print as '.'.
//   - Markdown is parsed in time linear in its length: by goldmark, with
//     links, emphasis, code spans and link reference definitions parsed by
//     this package (markdown_parser.go). It renders as goldmark does (every
//     CommonMark spec example alike) but for: block quotes and list items
//     nest at most 32 deep, a marker that would open a 33rd level being
//     text (CommonMark sets no limit); link destinations nest parentheses
//     at most 32 deep and, in pointy brackets, hold no '<' (CommonMark's
//     rules, which goldmark lacks); a link reference definition's title
//     followed by other text is no title (likewise). PDFs over 100 pages
//     are not compressed: fpdf's per-page zlib set-up would double their
//     time.
//   - The event log and the deliveries are kept whole (unbounded) for
//     inspection; [Server.Reset] empties them.
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
// a test advances it and calls [Server.WaitIdle] (or
// [Server.WaitForDelivery]) instead of sleeping:
//
//	clock := mockserver.NewFakeClock(start)
//	ts := mockserver.NewTestServer(t, mockserver.WithClock(clock))
//	// register a webhook, update a context, then:
//	clock.Advance(time.Minute)
//	ts.WaitIdle(ctx) // attempt 2 has happened
//
// [Server.Deliveries], [Server.Delivery] and [Server.Redeliver] inspect and
// retry deliveries; [Server.Close] stops them gracefully.
//
// # Admin API
//
// Unless [WithAdmin](false), the server also answers under /_mock/, with no
// key: GET and POST /_mock/events, GET /_mock/deliveries (?eventId=,
// ?webhookId=, ?state=), GET /_mock/deliveries/{id}, POST
// /_mock/deliveries/{id}/redeliver, POST /_mock/contexts/{id}/publish, GET
// /_mock/clock, POST /_mock/clock/advance (fake clock only, else 409), POST
// /_mock/reset, and GET, POST, DELETE /_mock/faults. The embedded OpenAPI
// document describes each. Admin errors use the contract's error body, with
// two types of the mock's own: conflict (409) and unavailable (503).
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
// are never faulted.
package mockserver
