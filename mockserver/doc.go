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
//     rendered plain text with "- " and "N. " list markers; raw HTML appears
//     in no format except markdown. The PDF uses core fonts, so characters
//     outside cp1252 print as '.'.
//   - The event log is kept whole (unbounded) for inspection.
//
// # Events
//
// Every operation that fires an event appends it to the server's log
// ([Server.Events]) with the exact envelope bytes a delivery would send;
// [Server.Publish] fires context.published, which no public endpoint does.
package mockserver
