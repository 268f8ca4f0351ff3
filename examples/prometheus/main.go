// Command prometheus runs a workload through headroom's HTTP client against
// a local server with a hidden quota, a short outage and a quota drop, and
// serves the metrics it records at /metrics in Prometheus's format, for the
// whole duration. It then prints what it counted, as one JSON object, and
// exits 0.
//
//	cd examples/prometheus && go run . -addr 127.0.0.1:9464 -duration 45s
//
// The workload runs flat out, into the hidden quota, the outage and the
// drop, until -quiet (default 15s) before the end, then trickles, one call
// every half second a client, well within every quota, so that each alert
// it fired resolves; it stops three seconds before the end. The command
// then keeps serving /metrics until a scrape has begun after the workload
// stopped (up to -final-scrape, default 30s), so that the final counts are
// exported whatever the scrape interval.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9464", "address to serve /metrics on")
	duration := flag.Duration("duration", 45*time.Second, "how long to run, at least 10s more than -quiet")
	flag.DurationVar(&quiet, "quiet", quiet, "how long the workload trickles before it stops, for the alerts to resolve")
	flag.DurationVar(&finalScrape, "final-scrape", finalScrape, "how long to wait, after the workload, for a scrape of its final counts")
	flag.Parse()
	if *duration < quiet+10*time.Second {
		log.Fatal("prometheus: -duration must be at least 10s more than -quiet")
	}
	if err := run(*addr, *duration, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// finalScrape bounds the wait for a scrape of the final counts.
var finalScrape = 30 * time.Second

// quiet is how long the workload trickles before it stops: longer than
// the alert rules' windows (5 minutes, or 5 seconds in the test's rules,
// scaled down 60 times) and a few evaluations, so that every alert the
// flat-out phase fired resolves while calls still succeed.
var quiet = 15 * time.Second

// drain is how long before the end the workload stops.
const drain = 3 * time.Second

// scrapes notes when each scrape of /metrics began, and wakes a waiter.
type scrapes struct {
	last atomic.Int64 // the latest scrape's start, Unix nanoseconds
	seen chan struct{}
}

func (s *scrapes) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now().UnixNano()
		h.ServeHTTP(w, r)
		s.last.Store(start)
		select {
		case s.seen <- struct{}{}:
		default:
		}
	})
}

// after waits until a scrape that began after t has been served, or for
// at most limit; it reports whether one was.
func (s *scrapes) after(t time.Time, limit time.Duration) bool {
	timeout := time.After(limit)
	for s.last.Load() <= t.UnixNano() {
		select {
		case <-s.seen:
		case <-timeout:
			return false
		}
	}
	return true
}

// report is what the command prints when it is done.
type report struct {
	Calls     map[string]int64 `json:"calls"`     // by runner
	Succeeded map[string]int64 `json:"succeeded"` // by runner
	Received  int64            `json:"received"`  // requests the server answered
	Status    map[int]int64    `json:"status"`    // the server's answers by status
}

// run serves /metrics on addr, runs the workload flat out until quiet
// before the end and then trickles until drain before the end, and writes
// its report to out when duration is over.
func run(addr string, duration time.Duration, out io.Writer) error {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(context.Background())

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	scraped := &scrapes{seen: make(chan struct{}, 1)}
	mux.Handle("/metrics", scraped.wrap(promhttp.HandlerFor(registry, promhttp.HandlerOpts{})))
	metrics := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go metrics.Serve(ln)
	defer metrics.Close()

	dep := newServer(duration - quiet)
	srv := httptest.NewServer(dep)
	defer srv.Close()
	clients, err := newClients(mp)
	if err != nil {
		return err
	}
	busy, stopBusy := context.WithTimeout(context.Background(), duration-quiet)
	defer stopBusy()
	calm, stopCalm := context.WithTimeout(context.Background(), duration-drain)
	defer stopCalm()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			c.run(busy, srv.URL, c.workers, c.pause)
			c.run(calm, srv.URL, 1, trickle)
		})
	}
	wg.Wait()
	ended := time.Now()
	rep := report{Calls: map[string]int64{}, Succeeded: map[string]int64{}, Received: dep.received.Load(),
		Status: map[int]int64{200: dep.ok.Load(), 429: dep.throttled.Load(), 503: dep.unavailable.Load(), 500: dep.failed.Load()}}
	for _, c := range clients {
		rep.Calls[c.name], rep.Succeeded[c.name] = c.calls.Load(), c.succeeded.Load()
	}
	time.Sleep(time.Until(dep.start.Add(duration))) // keep serving /metrics to the end
	// The final counts are exported only once a scrape has read them.
	if !scraped.after(ended, finalScrape) {
		log.Printf("prometheus: no scrape of the final counts within %v", finalScrape)
	}
	if err := json.NewEncoder(out).Encode(rep); err != nil {
		return err
	}
	if err := metrics.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}
