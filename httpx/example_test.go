package httpx_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/httpx"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/resilience"
)

func ExampleNewClient() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Remaining", "4999")
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	// One policy per dependency: its breaker and budget are its memory.
	policy, err := resilience.HTTP(resilience.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Layers are listed outermost first: the resilience layer makes the
	// attempts, the limiter inside it takes one permit per attempt, and the
	// quota guard (on by default) reads the published quota.
	client, err := httpx.NewClient(
		httpx.WithResilience(policy),
		httpx.WithRateLimit(limit.Options{Adaptive: &adaptive.ConcurrencyConfig{Maximum: 200}, Name: "api"}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))

	// The other order is refused when the client is built.
	_, err = httpx.NewClient(
		httpx.WithRateLimit(limit.Options{PermitsPerSecond: 100}),
		httpx.WithResilience(policy),
	)
	fmt.Println(err)

	// A policy whose options conflict is refused when it is built; one
	// whose error was ignored is nil, and refused when the client is.
	conflicting, err := resilience.HTTP(resilience.Options{Timeout: headroom.Duration(2 * time.Second), AttemptTimeout: headroom.Duration(5 * time.Second)})
	fmt.Println(err)
	_, err = httpx.NewClient(httpx.WithResilience(conflicting))
	fmt.Println(err)
	// Output:
	// 200 hello
	// httpx: WithRateLimit = listed before WithResilience: want after WithResilience, inside the retries (outside them one permit covers every attempt, and a refusal is never retried)
	// resilience: AttemptTimeout = 5s: want at most Timeout (2s)
	// httpx: WithResilience = <nil>: want a policy, such as resilience.HTTP(resilience.Options{})'s
}

func ExampleParseConfig() {
	cfg, err := httpx.ParseConfig([]byte(`{
	  "resilience": {"retries": 3, "timeout": "30s", "attemptTimeout": "10s"},
	  "limiters": {
	    "default": {"permitsPerSecond": 50},
	    "github":  {"perWindow": {"permits": 5000, "window": "1h"}}
	  },
	  "rateLimit": "default",
	  "hosts": {"api.github.com": {"rateLimit": "github"}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	opts, err := cfg.Options()
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := httpx.NewClient(opts...)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = client // use it as any *http.Client

	// Every problem is listed at once.
	_, err = httpx.ParseConfig([]byte(`{
	  "limiters": {"a": {"permitsPerSecond": 5, "concurrency": 2}},
	  "rateLimit": "b"
	}`))
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		fmt.Println(errors.Is(e, headroom.ErrConfig), e)
	}
	// Output:
	// true httpx: limiters["a"] = [permitsPerSecond concurrency]: want exactly one shape; the others would silently lose
	// true httpx: rateLimit = "b": want the name of a limiter in limiters
}

func ExampleNewTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	policy, err := resilience.HTTP(resilience.Options{Name: "api"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A Transport for a client of your own; Close releases the limiters its
	// layers made.
	tr, err := httpx.NewTransport(
		httpx.WithResilience(policy),
		httpx.WithRateLimit(limit.Options{Concurrency: 8, Name: "api"}),
		httpx.WithoutQuotaGuard(),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tr.Close()
	client := &http.Client{Transport: tr}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 ok
}

func ExampleParseConfig_unknownFields() {
	// Unknown fields are listed all at once, each with the fields known
	// where it stands.
	_, err := httpx.ParseConfig([]byte(`{
	  "limiters": {"api": {"permitsPerSecnd": 5, "permitsPerSecond": 5}},
	  "rateLimt": "api"
	}`))
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *headroom.ConfigError
		if errors.As(e, &ce) {
			fmt.Println(ce.Field)
		}
	}
	// Output:
	// limiters["api"].permitsPerSecnd
	// rateLimt
}
