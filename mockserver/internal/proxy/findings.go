package proxy

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/page"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/queue"
)

// The bounds of the findings kept: the newest DefaultLimit (or as many as
// the server's history limit says), at most MaxBytes of them; past either,
// the oldest go first. The counts per operation are kept for every
// exchange, whatever the findings kept.
const (
	DefaultLimit = 10_000
	MaxBytes     = 16 << 20
)

// MaxMessage bounds a mismatch's message, and MaxMismatches how many
// mismatches of one side of an exchange a finding keeps (the count says
// how many there were).
const (
	MaxMessage    = 1000
	MaxMismatches = 50
)

// OffAPI is the operation of a request for a path or method the document
// does not serve.
const OffAPI = "off the API"

// Finding is one exchange that broke the document, or that the proxy
// could not hold to it.
type Finding struct {
	// Seq is its place in the log, which cursors count in.
	Seq uint64 `json:"-"`
	// ID names it in the admin API ("cm_" and its sequence number).
	ID string `json:"id"`
	// Time is when the answer ended, on the server's clock (RFC 3339).
	Time string `json:"time"`
	// Method and Target are the request's (Target: its path from /v1 on,
	// and its query), secrets masked.
	Method string `json:"method"`
	Target string `json:"target"`
	// Operation is the document's operation id, or OffAPI.
	Operation string `json:"operation"`
	// Status is the upstream's status (502 when it did not answer, 504
	// when it did not begin its answer within the time-out).
	Status int `json:"status"`
	// RequestID is the upstream's X-Request-Id, if it sent one.
	RequestID string `json:"requestId,omitempty"`
	// Request and Answer are how each breaks the document.
	Request []contract.Mismatch `json:"request"`
	Answer  []contract.Mismatch `json:"answer"`
	// Dropped counts the mismatches past MaxMismatches not kept.
	Dropped int `json:"dropped,omitempty"`
	// SDK says whether the SDK tolerates the answer (only when the
	// answer breaks the document).
	SDK *contract.Verdict `json:"sdk,omitempty"`
	// Unvalidated says why the exchange, or part of it, was not held to
	// the document (a body over MaxValidatedBody, an answer cut short, an
	// upstream that did not answer, or passed a time limit: which one).
	Unvalidated string `json:"unvalidated,omitempty"`
}

// MarshalJSON encodes the finding as the admin API shows it.
func (f *Finding) MarshalJSON() ([]byte, error) {
	type plain Finding
	p := plain(*f)
	if p.Request == nil {
		p.Request = []contract.Mismatch{}
	}
	if p.Answer == nil {
		p.Answer = []contract.Mismatch{}
	}
	return json.Marshal(p)
}

// size is what the log counts for a finding: its strings, and a record's
// overhead.
func (f *Finding) size() int {
	n := 300 + len(f.ID) + len(f.Time) + len(f.Method) + len(f.Target) + len(f.Operation) + len(f.RequestID) + len(f.Unvalidated)
	for _, ms := range [][]contract.Mismatch{f.Request, f.Answer} {
		for _, m := range ms {
			n += 64 + len(m.Where) + len(m.Rule) + len(m.Message)
		}
	}
	if f.SDK != nil {
		n += 32 + len(f.SDK.SDK)
	}
	return n
}

// Count is what the proxy saw of one operation: model.ContractCount, the
// server's public mockserver.ContractCount.
type Count = model.ContractCount

// Public is the finding as the server's Go API shows it
// (model.ContractFinding, mockserver.ContractFinding): its time parsed,
// the SDK's verdict split in two, a copy that shares nothing with the log.
func (f *Finding) Public() model.ContractFinding {
	cf := model.ContractFinding{ID: f.ID, Method: f.Method, Target: f.Target, Operation: f.Operation, Status: f.Status,
		RequestID: f.RequestID, Request: mismatches(f.Request), Answer: mismatches(f.Answer), Dropped: f.Dropped,
		Unvalidated: f.Unvalidated}
	cf.Time, _ = time.Parse(time.RFC3339Nano, f.Time)
	if f.SDK != nil {
		tolerated := f.SDK.Tolerated
		cf.SDKTolerates, cf.SDK = &tolerated, f.SDK.SDK
	}
	return cf
}

// mismatches copies the contract's mismatches as the Go API shows them.
func mismatches(ms []contract.Mismatch) []model.ContractMismatch {
	out := make([]model.ContractMismatch, len(ms))
	for i, m := range ms {
		out[i] = model.ContractMismatch(m)
	}
	return out
}

// Log keeps the findings, oldest first, bounded in entries and bytes, and
// the counts per operation. It is safe for concurrent use.
type Log struct {
	mu       sync.RWMutex
	limit    int
	maxBytes int
	bytes    int
	seq      uint64
	all      queue.Queue[*Finding]
	byID     map[string]*Finding
	counts   map[string]*Count
}

// NewLog returns an empty log keeping the newest limit findings, at most
// maxBytes of them (but always the newest).
func NewLog(limit, maxBytes int) *Log {
	return &Log{limit: limit, maxBytes: maxBytes, byID: make(map[string]*Finding), counts: make(map[string]*Count)}
}

// count returns the operation's count, made on first use. The operations
// are the document's and OffAPI, so the map is bounded by the document.
func (l *Log) count(op string) *Count {
	c := l.counts[op]
	if c == nil {
		c = &Count{Operation: op}
		l.counts[op] = c
	}
	return c
}

// record counts an exchange and keeps its finding, if it has one (f may
// be nil: an exchange that matched the document). It returns the finding
// as kept.
func (l *Log) record(op string, f *Finding, upstreamFailed, refused bool) *Finding {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.count(op)
	c.Exchanges++
	if refused {
		c.Refused++
	}
	if upstreamFailed {
		c.UpstreamFailures++
	}
	if f == nil {
		return nil
	}
	if n := len(f.Request) + len(f.Answer) + f.Dropped; n > 0 {
		c.Mismatched++
		c.Mismatches += n
	}
	if f.SDK != nil && !f.SDK.Tolerated {
		c.NotTolerated++
	}
	if f.Unvalidated != "" && !upstreamFailed {
		c.Unvalidated++
	}
	l.seq++
	f.Seq = l.seq
	f.ID = "cm_" + strconv.FormatUint(l.seq, 10)
	l.all.Push(f)
	l.byID[f.ID] = f
	l.bytes += f.size()
	for l.all.Len() > l.limit || (l.bytes > l.maxBytes && l.all.Len() > 1) {
		old := l.all.PopFront()
		delete(l.byID, old.ID)
		l.bytes -= old.size()
	}
	return f
}

// Get returns the kept finding with the given id.
func (l *Log) Get(id string) (*Finding, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	f, ok := l.byID[id]
	return f, ok
}

// Page returns up to limit findings from start, of operation op unless it
// is empty, and the position to continue from when more may follow (0
// when none do); a filtered page walks at most page.MaxScan findings past
// its last match. The findings are shared with the log, which never
// changes them.
func (l *Log) Page(start page.Start, limit int, op string) (out []*Finding, next uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	next = page.Walk(l.all.All(), func(f *Finding) uint64 { return f.Seq }, start, limit, page.MaxScan,
		func(f *Finding) bool { return op == "" || f.Operation == op },
		func(f *Finding) { out = append(out, f) })
	return out, next
}

// All returns the kept findings, oldest first, as the Go API shows them
// (Finding.Public); nil when none is kept.
func (l *Log) All() []model.ContractFinding {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var out []model.ContractFinding
	for _, f := range l.all.All() {
		out = append(out, f.Public())
	}
	return out
}

// Counts returns the counts per operation, in the order of the
// operation ids (OffAPI last).
func (l *Log) Counts() []Count {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]Count, 0, len(l.counts))
	for _, c := range l.counts {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Count) int {
		switch {
		case a.Operation == b.Operation:
			return 0
		case a.Operation == OffAPI:
			return 1
		case b.Operation == OffAPI:
			return -1
		case a.Operation < b.Operation:
			return -1
		}
		return 1
	})
	return out
}

// Stats returns how many findings are kept and the bytes they count.
func (l *Log) Stats() (findings, bytes int) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.all.Len(), l.bytes
}

// Limits returns the log's bounds, in findings and in bytes.
func (l *Log) Limits() (findings, bytes int) { return l.limit, l.maxBytes }

// Reset forgets the findings and the counts.
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = queue.Queue[*Finding]{}
	l.byID = make(map[string]*Finding)
	l.counts = make(map[string]*Count)
	l.bytes = 0
}
