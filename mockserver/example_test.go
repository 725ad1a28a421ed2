package mockserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

func ExampleNew() {
	srv := mockserver.New(mockserver.WithKey(mockserver.Key{Token: "sk_test", Plan: mockserver.PlanPro}))
	hs := httptest.NewServer(srv)
	defer hs.Close()

	req, _ := http.NewRequest("POST", hs.URL+"/v1/contexts", strings.NewReader(`{"name":"Runbook","tags":["ops","ops"]}`))
	req.Header.Set("Authorization", "Bearer sk_test")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var c contextsvc.Context
	_ = json.NewDecoder(res.Body).Decode(&c)
	fmt.Println(res.StatusCode, c.Version, c.Tags, res.Header.Get("X-RateLimit-Limit"), res.Header.Get("X-RateLimit-Remaining"))
	// Output: 201 1 [ops] 300 49
}

func ExampleParseKey() {
	k, err := mockserver.ParseKey("sk_load:enterprise=5000/200:read")
	if err != nil {
		panic(err)
	}
	fmt.Println(k.Plan, k.PerMinute, k.Burst, k.Scope)
	fmt.Println(k) // the token is never printed
	// Output:
	// enterprise 5000 200 read
	// Key{Account:default User: Plan:enterprise Scope:read Token:[redacted]}
}

func ExampleServer_Events() {
	clock := mockserver.NewFakeClock(time.Date(2026, 11, 21, 20, 51, 0, 0, time.UTC))
	srv := mockserver.New(mockserver.WithClock(clock))
	req := httptest.NewRequest("POST", "/v1/contexts", strings.NewReader(`{"name":"Plan","content":"# Goals\n\nShip it."}`))
	req.Header.Set("Authorization", "Bearer "+srv.DefaultKey().Token)
	srv.ServeHTTP(httptest.NewRecorder(), req)
	for _, ev := range srv.Events() {
		fmt.Println(ev.Type, ev.Timestamp.Format(time.RFC3339))
	}
	// Output:
	// context.created 2026-11-21T20:51:00Z
	// context.version.created 2026-11-21T20:51:00Z
}

// ExampleServer_HTTPServer serves the mock on its own http.Server, with the
// connection time-outs set, as a program outside a test would.
func ExampleServer_HTTPServer() {
	srv := mockserver.New(mockserver.WithReadHeaderTimeout(5*time.Second), mockserver.WithReadBodyTimeout(20*time.Second))
	hs := srv.HTTPServer("127.0.0.1:0")
	ln, err := net.Listen("tcp", hs.Addr) // or hs.ListenAndServe() on a fixed port
	if err != nil {
		panic(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer func() {
		_ = hs.Shutdown(context.Background())
		_ = srv.Close(context.Background())
	}()

	res, err := http.Get("http://" + ln.Addr().String() + "/_mock/clock")
	if err != nil {
		panic(err)
	}
	res.Body.Close()
	fmt.Println(res.StatusCode, hs.ReadHeaderTimeout, hs.IdleTimeout)
	// Output: 200 5s 2m0s
}
