package httpx

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/resilience"
	"github.com/headroom-go/headroom/telemetry"
	"go.opentelemetry.io/otel/attribute"
)

// Defaults of the per-host limiter map.
const (
	// defaultMaxHosts bounds how many hosts have a limiter at once.
	defaultMaxHosts = 1024
	// defaultIdleTimeout is how long a host's limiter may sit unused before
	// it may be dropped (a sliding window keeps it at least one window).
	defaultIdleTimeout = 10 * time.Minute
)

// A LimiterOption adjusts a limiter layer: WithRateLimit, WithLimiter.
type LimiterOption func(*limiterConfig)

type limiterConfig struct {
	shared   bool
	maxHosts int
	idle     time.Duration
	cost     func(*http.Request) int
	throttle func(*http.Response) (bool, time.Duration)
	key      func(*http.Request) string
}

// WithSharedLimiter makes the layer use one limiter for every host instead of one per
// host.
func WithSharedLimiter() LimiterOption { return func(c *limiterConfig) { c.shared = true } }

// WithMaxHosts bounds how many per-host limiters the layer keeps (default
// 1,024). When a new host arrives and the map is full, the limiters
// idle longer than the idle timeout are dropped, then the least recently used
// that may go, an eighth of the bound at a time. A limiter may go when no request is using it and it is at
// rest (limit.AtRest: a bucket full again, a window with nothing in it) or it
// learns (Adaptive, AdaptiveRate, which then forget what they learned). A
// host whose PerSecond or PerWindow limiter still holds spent permits is
// kept, past WithMaxHosts if need be: dropping it would let its next requests
// through as if none had been sent.
func WithMaxHosts(n int) LimiterOption { return func(c *limiterConfig) { c.maxHosts = n } }

// WithIdleTimeout is how long a host's limiter may go unused before it may be
// dropped (default 10 minutes, and never less than a sliding
// window's length). A dropped limiter forgets what it learned; the next
// request to that host starts a new one.
func WithIdleTimeout(d time.Duration) LimiterOption { return func(c *limiterConfig) { c.idle = d } }

// WithCost sets the request cost estimator: the units a request takes from the
// limiter, estimated before the request waits. The default gives every request
// 1; a request of cost 0 does not wait and teaches the limiter nothing.
func WithCost(f func(*http.Request) int) LimiterOption { return func(c *limiterConfig) { c.cost = f } }

// WithThrottleClassifier sets how the layer tells a throttle from a response,
// and reads the server's wait. The default is a throttle on 429, and on 503
// with a Retry-After, with the Retry-After.
func WithThrottleClassifier(f func(*http.Response) (throttled bool, retryAfter time.Duration)) LimiterOption {
	return func(c *limiterConfig) { c.throttle = f }
}

// WithHostKey sets what "host" means for the per-host limiters; the default is
// the request URL's host (Request.Host when the URL has none) in lower
// case, with its port unless that is the scheme's default:
// http://API.test:80/ and http://api.test/ share a limiter. The default quota guard keys hosts the same way.
func WithHostKey(f func(*http.Request) string) LimiterOption {
	return func(c *limiterConfig) { c.key = f }
}

// hostEntry is one host's limiter.
type hostEntry struct {
	lim    limit.Limiter // nil: no limiter for this host
	hold   bool          // keep the permit until the response body is done
	learns bool          // the limiter learns (Adaptive, AdaptiveRate): it may go when idle, forgetting
	shared bool          // the limiter serves other entries too: never closed here
	used   atomic.Uint64 // the hostSet's use clock at the host's last request
	busy   atomic.Int64  // requests from finding the entry (use) to releasing their lease
}

// hostSet finds a request's limiter: one shared, or one per host made on
// first use in a bounded map that drops idle hosts.
type hostSet struct {
	// owned says the layer made its limiters, and closes them with the
	// transport; a limiter handed to WithLimiter is its maker's.
	owned  bool
	shared *hostEntry
	make   func(host string) *hostEntry
	key    func(*http.Request) string
	max    int
	idle   int64 // nanoseconds

	// clock orders the hosts by their last use: it ticks when a request
	// goes to a host other than the one that last ticked it, so requests to
	// one busy host read it without writing it. It is a counter, not a
	// clock reading: the hot path reads no time.
	clock atomic.Uint64

	mu        sync.RWMutex
	m         map[string]*hostEntry
	swept     int64  // when the last idle sweep ran, Unix nanoseconds
	sweptTick uint64 // clock then: a host last used at or before it is idle since
}

// newHostSet is the host set of a limiter layer configured by c, whose
// limiters mk makes, and which keeps an idle limiter at least minIdle (a
// sliding window's length: a limiter dropped sooner would forget permits
// still counted).
func newHostSet(c *limiterConfig, minIdle time.Duration, mk func(host string) *hostEntry) *hostSet {
	s := &hostSet{owned: true, make: mk, key: c.key, max: c.maxHosts}
	s.idle = int64(max(cmp.Or(c.idle, defaultIdleTimeout), minIdle))
	if s.key == nil {
		s.key = hostKey
	}
	if s.max <= 0 {
		s.max = defaultMaxHosts
	}
	if c.shared {
		s.shared = mk("")
	} else {
		s.m = make(map[string]*hostEntry)
	}
	return s
}

// get returns the entry for req. It reads no clock unless the host is new:
// an entry only notes its turn in the use order, and a sweep drops the
// entries not used since the sweep before it, at least the idle timeout
// earlier.
func (s *hostSet) get(req *http.Request) *hostEntry { return s.lookup(req, false) }

// use is get for a request that goes on to take a lease: when the entry has
// a limiter, it also counts the request busy, in the same step as the
// lookup (under the map's lock, which a sweep holds to write), so that no
// new host's sweep drops the entry between the two; a request that took
// its permit from a dropped limiter would let the host's next request build
// a fresh one beside it. The caller gives the count back (e.busy.Add(-1))
// when it holds no lease, or when its lease is released. An entry without a
// limiter is not counted: it has nothing to lose in a sweep.
func (s *hostSet) use(req *http.Request) *hostEntry { return s.lookup(req, true) }

// lookup is use when busy is set, else get.
func (s *hostSet) lookup(req *http.Request, busy bool) *hostEntry {
	if e := s.shared; e != nil {
		e.count(busy)
		return e
	}
	host := s.key(req)
	s.mu.RLock()
	e := s.m[host]
	if e != nil {
		e.count(busy)
	}
	s.mu.RUnlock()
	if e == nil {
		return s.add(host, time.Now().UnixNano(), busy)
	}
	s.touch(e)
	return e
}

// count counts a request busy on e when busy is set and e has a limiter.
func (e *hostEntry) count(busy bool) {
	if busy && e.lim != nil {
		e.busy.Add(1)
	}
}

// touch makes e the most recently used entry.
func (s *hostSet) touch(e *hostEntry) {
	if e.used.Load() != s.clock.Load() {
		e.used.Store(s.clock.Add(1))
	}
}

// add is lookup for a host without an entry: it makes one, sweeping first
// when the map is full or the last sweep is an idle timeout old.
func (s *hostSet) add(host string, now int64, busy bool) *hostEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.m[host]; e != nil { // another request made it meanwhile
		e.count(busy)
		s.touch(e)
		return e
	}
	if len(s.m) >= s.max || now-s.swept > s.idle {
		s.sweep(now)
	}
	e := s.make(host)
	e.count(busy)
	e.used.Store(s.clock.Add(1))
	s.m[host] = e
	return e
}

// sweep runs when a new host arrives and the map is full or the last sweep
// is an idle timeout old. It drops the hosts not used since the last sweep
// (idle at least that long); if the map is still full, it drops the least
// recently used hosts until it is seven eighths full. Only a host that
// may go is dropped (see mayGo), so a map of hosts that may not stays over
// its bound until they may. s.mu is held.
func (s *hostSet) sweep(now int64) {
	aged := now-s.swept >= s.idle
	idleSince := s.sweptTick
	if aged {
		s.swept, s.sweptTick = now, s.clock.Load()
	}
	type spare struct {
		host string
		used uint64
	}
	var spares []spare
	for h, e := range s.m {
		if !e.mayGo() {
			continue
		}
		used := e.used.Load()
		if aged && used <= idleSince {
			delete(s.m, h)
			e.close()
			continue
		}
		spares = append(spares, spare{h, used})
	}
	// An eighth of the bound at a time, so that a stream of new hosts sorts
	// the map once every max/8 of them rather than for each.
	if over := len(s.m) - s.max + max(s.max/8, 1); over > 0 && len(spares) > 0 {
		slices.SortFunc(spares, func(a, b spare) int { return cmp.Compare(a.used, b.used) })
		for _, sp := range spares[:min(over, len(spares))] {
			s.m[sp.host].close()
			delete(s.m, sp.host)
		}
	}
}

// mayGo reports whether e may be dropped: no request is on its way to a
// lease (estimating its cost, waiting) or holding one, and its limiter is
// shared with other entries, learns, or is at rest. A limiter in use, or one
// whose spent permits are still being refilled, is never dropped: a new
// limiter beside it, or after it, would admit what it refuses.
func (e *hostEntry) mayGo() bool {
	return e.busy.Load() == 0 && (e.shared || e.learns || e.lim == nil || limit.AtRest(e.lim))
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

// hostLimiter is the one builder of the layers' limiters: host's limiter
// of the shape o describes, named o.Name or after its host, on the client's
// meter provider unless o names one, its metrics carrying the host's labels
// within the client's host series bound, and the layer. host "" is the limiter every host of a layer shares, named o.Name
// or after its shape, without those attributes.
//
// The layer validated o when it was built, so limit.New fails only when the
// caller has since changed what o points to (a *limit.WindowOptions, say);
// the host's requests then fail with that error, Permanent for the
// resilience layer, instead of the transport panicking.
func (b *builder) hostLimiter(o limit.Options, host string) *hostEntry {
	o.MeterProvider = b.meterProvider(o.MeterProvider)
	if o.Logger == nil {
		o.Logger = b.logger
	}
	if host != "" {
		labels := b.series.Labels(metrics.SplitPort(host))
		attrs := append(append(o.Attributes[:len(o.Attributes):len(o.Attributes)], labels...),
			attribute.String(telemetry.AttrLayer, metrics.LayerRateLimit))
		if o.Name == "" && metrics.Folded(labels) {
			// Named after their hosts, the hosts past the bound share
			// one name in telemetry too, and so one series.
			attrs = append(attrs, attribute.String(telemetry.AttrLimiter, telemetry.OtherHosts))
		}
		o.Name, o.Attributes = cmp.Or(o.Name, host), attrs
	}
	lim, err := limit.New(o)
	if err != nil {
		host = cmp.Or(host, "(all hosts)")
		err = &resilience.PermanentError{
			Err: fmt.Errorf("%w: the limiter of host %q, valid when the layer was built: %w", headroom.ErrConfig, host, err)}
		// learns: it may go when idle, and be built anew.
		return &hostEntry{lim: brokenLimiter{err}, learns: true}
	}
	// A concurrency permit is held until the body is done; a limiter that
	// learns may be dropped when idle, forgetting.
	return &hostEntry{lim: lim, hold: o.Concurrency > 0 || o.Adaptive != nil, learns: o.Adaptive != nil || o.AdaptiveRate != nil}
}

// brokenLimiter stands for a limiter that could not be built: every
// request of its host fails with err.
type brokenLimiter struct{ err error }

func (b brokenLimiter) Acquire(context.Context) (limit.Lease, error) { return limit.Lease{}, b.err }

func (b brokenLimiter) AcquireN(context.Context, int) (limit.Lease, error) {
	return limit.Lease{}, b.err
}

func (b brokenLimiter) Name() string { return "broken" }

// minIdle is how long a host's limiter of o must be kept once idle: a
// sliding window's length, since it forgets the permits it still counts.
func minIdle(o limit.Options) time.Duration {
	if o.PerWindow != nil {
		return time.Duration(o.PerWindow.Window)
	}
	return 0
}

func closeLimiter(l limit.Limiter) {
	if c, ok := l.(interface{ Close() }); ok {
		c.Close()
	}
}

// hostKey is the default host key: the request URL's host (Request.Host
// when the URL has none) in lower case, without the scheme's default port
// (":80" for http, ":443" for https), so that one host has one limiter
// however its URLs spell it. A host already in that form, the usual case,
// comes back as it is, without allocating.
func hostKey(r *http.Request) string {
	host, scheme := r.Host, ""
	if r.URL != nil {
		scheme = r.URL.Scheme
		if r.URL.Host != "" {
			host = r.URL.Host
		}
	}
	return normalHost(host, scheme)
}

// normalHost is host in lower case, without the port when it is the
// scheme's default or empty. An empty scheme takes both 80 and 443 for
// default ports: a configuration's host names no scheme.
func normalHost(host, scheme string) string {
	if plainHost(host) {
		return host // the common case, read once
	}
	if h, ok := cutPort(host); ok {
		switch port := host[len(h)+1:]; {
		case port == "",
			port == "80" && (scheme == "" || strings.EqualFold(scheme, "http")),
			port == "443" && (scheme == "" || strings.EqualFold(scheme, "https")):
			host = h
		}
	}
	return strings.ToLower(host)
}

// plainHost reports whether host is already its own key: ASCII, no upper
// case, no port.
func plainHost(host string) bool {
	for i := 0; i < len(host); i++ {
		if c := host[i]; c == ':' || 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// cutPort is host without its ":port", and whether it had one. An IPv6
// address keeps its brackets ("[::1]:8080" is "[::1]"), as in the host keys
// it is compared with; the colons inside them are no port's.
// net.SplitHostPort would strip them.
func cutPort(host string) (string, bool) {
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.IndexByte(host[i:], ']') >= 0 {
		return host, false
	}
	return host[:i], true
}
