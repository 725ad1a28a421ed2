package mockserver

import (
	"crypto/rand"
	"io"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/state"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// WriteStateDocument writes a state document (the format of
// [Server.SaveState], GET /_mock/state and a -state-file) that holds
// contexts and nothing else: no webhook, event or delivery. A server that
// loads it ([Server.LoadState], PUT /_mock/state, or [WithStateFile] at
// start) serves each context under its own id, with its versions as they
// are given. It is how data read from another deployment through /v1
// (which never returns webhook secrets) becomes a mock's state: the
// command contextsvc snapshot writes its file with it.
//
// A context is written as its Versions, oldest first: its current name,
// content and tags are its last version's, its other fields are not
// written. Contexts are grouped by Account (an empty Account is
// [DefaultAccount]), accounts in the order of their first context, and
// keep their order within an account, which is their creation order (the
// order list cursors follow). The cursor salt is a fresh random one.
//
// The document is not checked here: a load holds every field to the
// API's rules (ids, names, content, tags, user ids, version numbers 1, 2,
// 3… in order) and refuses a document that breaks one with a
// [*StateError] saying where, so load what this writes into a scratch
// server before relying on it. Every account must be one the loading
// server has: a key's, or, for a state file read at start, any.
func WriteStateDocument(w io.Writer, contexts []StoredContext) error {
	snap := &state.Snapshot{SavedAt: time.Now()}
	_, _ = rand.Read(snap.Salt[:]) // never fails (crypto/rand)
	accounts := map[string]int{}   // account -> index in snap.Store.Accounts
	for _, c := range contexts {
		account := c.Account
		if account == "" {
			account = DefaultAccount
		}
		i, ok := accounts[account]
		if !ok {
			i = len(snap.Store.Accounts)
			accounts[account] = i
			snap.Store.Accounts = append(snap.Store.Accounts, store.SavedAccount{ID: account})
		}
		a := &snap.Store.Accounts[i]
		versions := make([]*store.Version, len(c.Versions))
		for j, v := range c.Versions {
			versions[j] = &store.Version{Version: v.Version, Name: v.Name, Content: v.Content, Tags: v.Tags,
				CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy, Changes: v.Changes}
		}
		a.ContextSeq++
		a.Contexts = append(a.Contexts, store.SavedContext{ID: c.ID, Seq: a.ContextSeq, Versions: versions})
	}
	_, err := snap.WriteTo(w)
	return err
}
