package store

import (
	"math"
	"slices"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/page"
)

// Summary is a context as the admin lists show it: its account, and its
// content's size instead of the content (Content is set only by Find).
type Summary struct {
	Account   string
	ID        string
	Name      string
	Tags      []string
	Version   int
	SizeBytes int
	CreatedAt time.Time
	UpdatedAt time.Time
	Content   string
}

func (c *Context) summary(account string) Summary {
	return Summary{Account: account, ID: c.id, Name: c.name, Tags: c.tags, Version: c.version,
		SizeBytes: len(c.content), CreatedAt: c.createdAt, UpdatedAt: c.updatedAt}
}

// seqBits splits a position of the store-wide list of contexts: its
// account's place (from 1) in the high bits, its seq in its account in the
// low ones.
const seqBits = 40

func storePos(acct int, seq uint64) uint64 { return uint64(acct+1)<<seqBits | seq }

// ContextsPage pages through every account's contexts (or one account's,
// when account is not ""), by account in the order they were added, then
// in creation order; newest first when start is descending. It returns the
// page and the position to continue from when more follow (0 when none
// do). Each page is a binary search per account it visits and its items,
// at any depth.
func (s *Store) ContextsPage(account string, start page.Start, limit int) (items []Summary, next uint64) {
	accts := make([]int, 0, len(s.list))
	for i, a := range s.list {
		if account == "" || a.id == account {
			accts = append(accts, i)
		}
	}
	if start.Desc {
		slices.Reverse(accts)
	}
	for n, ai := range accts {
		lo, hi := storePos(ai, 0), storePos(ai+1, 0)
		// Where the walk starts in this account, if the cursor is not
		// past it.
		ps := page.Start{Desc: start.Desc}
		switch {
		case !start.Desc && start.Pos >= hi, start.Desc && start.Pos <= lo:
			continue
		case !start.Desc && start.Pos < lo:
			ps.Pos = 0
		case start.Desc && start.Pos >= hi:
			ps.Pos = math.MaxUint64
		default:
			ps.Pos = start.Pos - lo
		}
		a := s.list[ai]
		a.mu.RLock()
		var last uint64
		more := page.Walk(a.order, func(c *Context) uint64 { return c.seq }, ps, limit-len(items), page.MaxScan,
			func(*Context) bool { return true },
			func(c *Context) {
				items = append(items, c.summary(a.id))
				last = c.seq
			})
		a.mu.RUnlock()
		if more != 0 {
			return items, lo + more
		}
		if len(items) == limit {
			// Full at the end of this account: more follow if a later
			// account has contexts.
			for _, later := range accts[n+1:] {
				if c, _ := s.list[later].Counts(); c > 0 {
					return items, lo + last
				}
			}
			return items, 0
		}
	}
	return items, 0
}

// find returns the live context id, whatever its account, with its account
// locked for reading; the caller unlocks it.
func (s *Store) find(id string) (*Account, *Context) {
	for _, a := range s.list {
		a.mu.RLock()
		if c, ok := a.byID[id]; ok {
			return a, c
		}
		a.mu.RUnlock()
	}
	return nil, nil
}

// Find returns the live context id, whatever its account, with its
// content, and whether there is one.
func (s *Store) Find(id string) (Summary, bool) {
	a, c := s.find(id)
	if c == nil {
		return Summary{}, false
	}
	defer a.mu.RUnlock()
	sum := c.summary(a.id)
	sum.Content = c.content
	return sum, true
}

// Copy returns a deep copy of the live context id, whatever its account,
// and whether there is one.
func (s *Store) Copy(id string) (model.StoredContext, bool) {
	a, c := s.find(id)
	if c == nil {
		return model.StoredContext{}, false
	}
	defer a.mu.RUnlock()
	return c.copy(a.id), true
}

// VersionsPage walks the versions of the live context id, whatever its
// account, from start, passing up to limit of them to take; it returns the
// position to continue from (0 when none follow), and false when there is
// no such context. Versions never change once recorded: take may keep
// them.
func (s *Store) VersionsPage(id string, start page.Start, limit int, take func(*Version)) (next uint64, ok bool) {
	a, c := s.find(id)
	if c == nil {
		return 0, false
	}
	defer a.mu.RUnlock()
	return page.Walk(c.versions, func(v *Version) uint64 { return uint64(v.Version) }, start, limit, page.MaxScan,
		func(*Version) bool { return true }, take), true
}

// TwoVersions returns versions from and to of the live context id,
// whatever its account: to 0 is the latest, from 0 the one before to (or
// the first). It returns the numbers chosen, how many versions there are,
// and false for the versions when either is past the last; found is false
// when there is no such context.
func (s *Store) TwoVersions(id string, from, to int) (fv, tv *Version, fromN, toN, n int, ok, found bool) {
	a, c := s.find(id)
	if c == nil {
		return nil, nil, 0, 0, 0, false, false
	}
	defer a.mu.RUnlock()
	n = len(c.versions)
	if to == 0 {
		to = n
	}
	if from == 0 {
		from = max(to-1, 1)
	}
	if from > n || to > n {
		return nil, nil, from, to, n, false, true
	}
	return c.versions[from-1], c.versions[to-1], from, to, n, true, true
}

// Published is what a context.published event tells of a context.
type Published struct {
	Account, Name string
	Version       int
	// By is the first user of the account's keys or, for an account with
	// no key (one a state file brought), the context's last author.
	By string
}

// Publish returns what a context.published event tells of the live
// context id, whatever its account, and whether there is one.
func (s *Store) Publish(id string) (Published, bool) {
	a, c := s.find(id)
	if c == nil {
		return Published{}, false
	}
	defer a.mu.RUnlock()
	by := c.versions[len(c.versions)-1].CreatedBy
	if len(a.users) > 0 {
		by = a.users[0]
	}
	return Published{Account: a.id, Name: c.name, Version: c.version, By: by}, true
}

// Snapshot returns deep copies of everything stored: every account's
// contexts, by account in the order they were added then in creation
// order, and their webhooks, likewise, each account's taken under its
// lock.
func (s *Store) Snapshot() model.Snapshot {
	var snap model.Snapshot
	for _, a := range s.list {
		cs, ws := a.Snapshot()
		snap.Contexts = append(snap.Contexts, cs...)
		snap.Webhooks = append(snap.Webhooks, ws...)
	}
	return snap
}

// Contexts returns deep copies of the live contexts of the account, in
// creation order; nil for an account the store does not have.
func (s *Store) Contexts(account string) []model.StoredContext {
	a := s.accounts[account]
	if a == nil {
		return nil
	}
	cs, _ := a.Snapshot()
	return cs
}

// Webhooks returns copies of every webhook, by account in the order they
// were added then in registration order. It copies the webhooks alone:
// its cost does not grow with the contexts stored.
func (s *Store) Webhooks() []model.Webhook {
	var out []model.Webhook
	for _, a := range s.list {
		out = a.AccountWebhooks(out)
	}
	return out
}

// AccountWebhooks returns copies of the account's webhooks, in
// registration order; nil for an account the store does not have.
func (s *Store) AccountWebhooks(account string) []model.Webhook {
	a := s.accounts[account]
	if a == nil {
		return nil
	}
	return a.AccountWebhooks([]model.Webhook{})
}

// WebhookInfo returns a copy of the webhook id, whatever its account, and
// whether there is one (a deleted webhook is not).
func (s *Store) WebhookInfo(id string) (model.Webhook, bool) {
	w, ok := s.Webhook(id)
	if !ok {
		return model.Webhook{}, false
	}
	return w.Info(), true
}
