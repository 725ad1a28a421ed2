package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redisstore"
)

// TestZeroValuesRefuse: a Limiter or Deduper not made by its constructor
// has no Redis; every call returns an error instead of panicking.
func TestZeroValuesRefuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var d redisstore.Deduper
	_, _, claimErr := d.Claim(ctx, "evt_1", time.Minute)
	for name, err := range map[string]error{
		"Limiter.Wait":    new(redisstore.Limiter).Wait(ctx),
		"Deduper.Claim":   claimErr,
		"Deduper.Commit":  d.Commit(ctx, "evt_1", "tok", time.Hour),
		"Deduper.Release": d.Release(ctx, "evt_1", "tok"),
	} {
		if !errors.Is(err, contextsvc.ErrInvalidArgument) {
			t.Errorf("%s on the zero value: %v, want ErrInvalidArgument", name, err)
		}
	}
}
