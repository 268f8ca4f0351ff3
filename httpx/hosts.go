package httpx

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/resilience"
)

// Defaults of the per-host limiter map.
const (
	// DefaultMaxHosts bounds how many hosts have a limiter at once.
	DefaultMaxHosts = 1024
	// DefaultIdleTimeout is how long a host's limiter may sit unused before
	// it may be dropped (a sliding window keeps it at least one window).
	DefaultIdleTimeout = 10 * time.Minute
)

// A LimiterOption adjusts a limiter layer: WithRateLimit, WithAdaptiveRate,
// WithLimiter.
type LimiterOption func(*limiterConfig)

type limiterConfig struct {
	shared   bool
	maxHosts int
	idle     time.Duration
	cost     func(*http.Request) int
	throttle func(*http.Response) (bool, time.Duration)
	key      func(*http.Request) string
	name     string
}

// Shared makes the layer use one limiter for every host instead of one per
// host.
func Shared() LimiterOption { return func(c *limiterConfig) { c.shared = true } }

// MaxHosts bounds how many per-host limiters the layer keeps (default
// DefaultMaxHosts). When a new host arrives and the map is full, the limiters
// idle longer than the idle timeout are dropped, then the least recently
// used idle one.
func MaxHosts(n int) LimiterOption { return func(c *limiterConfig) { c.maxHosts = n } }

// IdleTimeout is how long a host's limiter may go unused before it may be
// dropped (default DefaultIdleTimeout, and never less than a sliding
// window's length). A dropped limiter forgets what it learned; the next
// request to that host starts a new one.
func IdleTimeout(d time.Duration) LimiterOption { return func(c *limiterConfig) { c.idle = d } }

// Cost sets the request cost estimator: the units a request takes from the
// limiter (seed 000: "Estimate the cost"). The default gives every request
// 1; a request of cost 0 does not wait and teaches the limiter nothing.
func Cost(f func(*http.Request) int) LimiterOption { return func(c *limiterConfig) { c.cost = f } }

// ThrottleClassifier sets how the layer tells a throttle from a response,
// and reads the server's wait. The default is a throttle on 429, and on 503
// with a Retry-After (seed 000), with the Retry-After.
func ThrottleClassifier(f func(*http.Response) (throttled bool, retryAfter time.Duration)) LimiterOption {
	return func(c *limiterConfig) { c.throttle = f }
}

// HostKey sets what "host" means for the per-host limiters; the default is
// quota.HostKey, the request URL's host with its port.
func HostKey(f func(*http.Request) string) LimiterOption { return func(c *limiterConfig) { c.key = f } }

// LimiterName names the limiters of WithAdaptiveRate in errors and telemetry;
// WithRateLimit takes the name from limit.Options.Name. Per-host limiters
// without a name are named after their host.
func LimiterName(name string) LimiterOption { return func(c *limiterConfig) { c.name = name } }

// hostEntry is one host's limiter.
type hostEntry struct {
	lim    limit.Limiter // nil: no limiter for this host
	err    error         // the limiter could not be built: every request fails with it
	hold   bool          // keep the permit until the response body is done
	shared bool          // the limiter serves other entries too: never closed here
	used   atomic.Bool   // a request since the last sweep
	busy   atomic.Int64  // requests holding a lease
}

// hostSet finds a request's limiter: one shared, or one per host made on
// first use in a bounded map that drops idle hosts.
type hostSet struct {
	shared *hostEntry
	make   func(host string) *hostEntry
	key    func(*http.Request) string
	max    int
	idle   int64 // nanoseconds

	mu    sync.RWMutex
	m     map[string]*hostEntry
	swept int64
}

func newHostSet(c *limiterConfig, mk func(host string) *hostEntry) *hostSet {
	s := &hostSet{make: mk, key: c.key, max: c.maxHosts, idle: int64(c.idle)}
	if s.key == nil {
		s.key = quota.HostKey
	}
	if s.max <= 0 {
		s.max = DefaultMaxHosts
	}
	if s.idle <= 0 {
		s.idle = int64(DefaultIdleTimeout)
	}
	if c.shared {
		s.shared = mk("")
	} else {
		s.m = make(map[string]*hostEntry)
	}
	return s
}

// get returns the entry for req. It reads no clock unless the host is new:
// an entry only notes that it was used, and a sweep drops the entries not
// used since the sweep before it, at least the idle timeout earlier.
func (s *hostSet) get(req *http.Request) *hostEntry {
	if e := s.shared; e != nil {
		return e
	}
	host := s.key(req)
	s.mu.RLock()
	e := s.m[host]
	s.mu.RUnlock()
	if e == nil {
		return s.add(host, time.Now().UnixNano())
	}
	if !e.used.Load() {
		e.used.Store(true)
	}
	return e
}

func (s *hostSet) add(host string, now int64) *hostEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.m[host]; e != nil {
		return e
	}
	if len(s.m) >= s.max || now-s.swept > s.idle {
		s.sweep(now)
	}
	e := s.make(host)
	e.used.Store(true)
	s.m[host] = e
	return e
}

// sweep runs when a new host arrives and the map is full or the last sweep
// is an idle timeout old. It drops the hosts not used since the last sweep
// (idle at least that long) and marks the others unused; if the map is
// still full, it drops one more host not in use. A host with a lease out is
// never dropped: a new limiter beside it would double its allowance. s.mu
// is held.
func (s *hostSet) sweep(now int64) {
	aged := now-s.swept >= s.idle
	if aged {
		s.swept = now
	}
	spare := ""
	for h, e := range s.m {
		if e.busy.Load() > 0 {
			continue
		}
		if aged && !e.used.Load() {
			delete(s.m, h)
			e.close()
			continue
		}
		if spare == "" || !e.used.Load() {
			spare = h
		}
		if aged {
			e.used.Store(false)
		}
	}
	if len(s.m) >= s.max && spare != "" {
		s.m[spare].close()
		delete(s.m, spare)
	}
}

// len is how many hosts have an entry.
func (s *hostSet) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.m)
}

// close releases every limiter.
func (s *hostSet) close() {
	if s.shared != nil {
		closeLimiter(s.shared.lim)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, e := range s.m {
		e.close()
		delete(s.m, h)
	}
}

func (e *hostEntry) close() {
	if !e.shared {
		closeLimiter(e.lim)
	}
}

// limiterEntry is a host's entry for the limiter limit.New returned. The
// layer validated the options when it was built, so New fails only when the
// caller has since changed what the options point to (a *limit.WindowOptions,
// say); the host's requests then fail with that error, Permanent for the
// resilience layer, instead of the transport panicking.
func limiterEntry(host string, lim limit.Limiter, err error, hold bool) *hostEntry {
	if err != nil {
		if host == "" {
			host = "(all hosts)"
		}
		return &hostEntry{err: &resilience.PermanentError{
			Err: fmt.Errorf("%w: the limiter of host %q, valid when the layer was built: %w", ErrConfig, host, err)}}
	}
	return &hostEntry{lim: lim, hold: hold}
}

func closeLimiter(l limit.Limiter) {
	if c, ok := l.(interface{ Close() }); ok {
		c.Close()
	}
}
