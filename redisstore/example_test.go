package redisstore_test

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redisstore"
)

// Every process of a fleet builds its limiter for the same key and plan;
// together they send at most the plan's rate. (It needs a Redis, so it
// has no output to check.)
func ExampleNewLimiter() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	apiKey := os.Getenv("CONTEXTSVC_API_KEY")

	lim, err := redisstore.NewLimiter(rdb, apiKey, contextsvc.BusinessPlan(),
		redisstore.WithLogger(slog.Default())) // says once when Redis is unreachable, and when it is back
	if err != nil {
		log.Fatal(err)
	}
	client, err := contextsvc.NewClient(apiKey, contextsvc.WithLimiter(lim))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.Contexts.List(context.Background(), nil); err != nil {
		log.Fatal(err)
	}
}

// Where a 429 costs more than a failed call, fail closed: with Redis
// unreachable, calls fail at once, unsent, with an error wrapping
// ErrUnavailable.
func ExampleWithFailureMode() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	apiKey := os.Getenv("CONTEXTSVC_API_KEY")

	lim, err := redisstore.NewLimiter(rdb, apiKey, contextsvc.ProPlan(),
		redisstore.WithFailureMode(redisstore.FailClosed))
	if err != nil {
		log.Fatal(err)
	}
	client, err := contextsvc.NewClient(apiKey, contextsvc.WithLimiter(lim))
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Contexts.Get(context.Background(), "ctx_123")
	if errors.Is(err, redisstore.ErrUnavailable) {
		log.Print("the shared rate limit is unavailable; try again later")
	}
}

// Every replica of a receiver gives its handler a Deduper on the same
// Redis and prefix: each event is handled once across them, however many
// copies and retries reach which replica. (It needs a Redis, so it has no
// output to check.)
func ExampleNewDeduper() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	dedupe, err := redisstore.NewDeduper(rdb, "myapp:webhooks:")
	if err != nil {
		log.Fatal(err)
	}
	handle := func(ctx context.Context, ev *contextsvc.Event) error {
		log.Printf("handling %s %s", ev.Type, ev.ID)
		return nil // an error answers 500: the service retries, and the retry is handled afresh
	}
	secret := os.Getenv("CONTEXTSVC_WEBHOOK_SECRET")
	h, err := contextsvc.NewWebhookHandler(secret, handle, contextsvc.WithDeduper(dedupe))
	if err != nil {
		log.Fatal(err) // no secret, or a bad option
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks/contextsvc", h)
	srv := &http.Server{
		Addr:              ":8080",
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,  // the request's headers
		ReadTimeout:       15 * time.Second, // headers and body
		WriteTimeout:      30 * time.Second, // from the headers to the end of the answer, handle included
		IdleTimeout:       time.Minute,      // a kept-alive connection between deliveries
	}
	log.Fatal(srv.ListenAndServe())
}
