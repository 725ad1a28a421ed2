package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// cleanupTimeout bounds the clean-up, which runs even after the run was
// stopped.
const cleanupTimeout = 2 * time.Minute

// cleanup deletes every context the run created: those it recorded, and
// any other carrying the run's tag (a create whose answer was lost). It
// goes through the SDK's client, paced by the run's limiter and retrying
// 429s and server errors as any client would. It returns what is left:
// the webhooks (the /v1 API cannot delete one) and any context it could
// not delete.
func (r *runner) cleanup(ctx context.Context) []LeftBehind {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	var left []LeftBehind
	r.mu.Lock()
	created, hooks := slices.Clone(r.created), slices.Clone(r.hooks)
	r.mu.Unlock()
	if len(created) > 0 || !r.cfg.ReadOnly {
		client, err := contextsvc.NewClient(r.cfg.APIKey, contextsvc.WithBaseURL(r.base.String()),
			contextsvc.WithHTTPClient(r.cfg.HTTPClient), contextsvc.WithLimiter(r.cfg.Limiter), contextsvc.WithUserAgent("contextsvc-conform"))
		if err != nil {
			for _, id := range created {
				left = append(left, LeftBehind{Kind: "context", ID: id, Why: "not deleted: " + err.Error()})
			}
		} else {
			left = append(left, r.deleteContexts(ctx, client, created)...)
		}
	}
	for _, id := range hooks {
		left = append(left, LeftBehind{Kind: "webhook", ID: id,
			Why: "the /v1 API has no way to delete a webhook: delete it where the service lets you (its dashboard; on the mock, DELETE /_mock/webhooks/" + id +
				"). Until then it is sent every event it subscribes to, to a receiver that is gone, and retried"})
	}
	if len(left) > 0 {
		r.progress("left behind: %d (see the report)", len(left))
	}
	return left
}

// deleteContexts deletes the recorded contexts, then any other with the
// run's tag.
func (r *runner) deleteContexts(ctx context.Context, client *contextsvc.Client, created []string) []LeftBehind {
	var left []LeftBehind
	done := map[string]bool{}
	del := func(id string) {
		if done[id] {
			return
		}
		done[id] = true
		_, err := client.Contexts.Delete(ctx, id)
		if err != nil && !errors.Is(err, contextsvc.ErrNotFound) {
			left = append(left, LeftBehind{Kind: "context", ID: id, Why: "could not delete it: " + r.redact.text(err.Error())})
		}
	}
	for _, id := range created {
		del(id)
	}
	if r.cfg.ReadOnly {
		return left
	}
	// The sweep lists before it deletes: deleting while paging would move
	// the pages under it.
	var tagged []string
	for c, err := range client.Contexts.All(ctx, &contextsvc.ContextListOptions{Tags: []string{r.tag}, Limit: 100}) {
		if err != nil {
			left = append(left, LeftBehind{Kind: "context", ID: "(any tagged " + r.tag + ")",
				Why: fmt.Sprintf("could not list the run's contexts to delete them: %s", r.redact.text(err.Error()))})
			break
		}
		tagged = append(tagged, c.ID)
	}
	for _, id := range tagged {
		del(id)
	}
	return left
}
