package quota

import (
	"cmp"
	"math"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/backoffcurve"
	"github.com/headroom-go/headroom/internal/problems"
)

// Options configures a Guard. The zero value is a complete configuration:
// every field has a working default, given beside it with its reason.
type Options struct {
	// Name names the guard in its refusals (RateLimitedError.Limiter).
	// Default "quota".
	Name string `json:"name,omitempty"`

	// ReserveUnits and ReserveFraction make the reserve: an attempt is
	// refused while a key's remaining allowance is at or below the larger
	// of ReserveUnits and ReserveFraction × its limit, and the reset is
	// ahead. nil means the default.
	//
	// ReserveUnits defaults to 0 and ReserveFraction to 0.02, rounded
	// down: what is kept back is for what the guard cannot see — another
	// process on the same quota, a request the server counts twice. A unit
	// kept back whatever the limit would leave a fifth of a quota of 5 a
	// second unspent, on every window. Reserves of 5 requests or 10 %, as
	// often suggested, are for a client that does not count its own requests; this
	// guard decrements its copy of the remaining allowance as each attempt
	// goes out, so its own concurrency is already covered and the reserve
	// only has to absorb others' traffic. 2 % keeps 98 % of a quota usable
	// (the end-to-end test holds it to at least 95 %) while leaving 20 of GitHub's
	// 1 000-point windows or 100 of its 5 000 an hour unspent. Set
	// ReserveFraction to new(0.0) to spend down to zero.
	ReserveUnits    *int64   `json:"reserveUnits,omitempty"`
	ReserveFraction *float64 `json:"reserveFraction,omitempty"`

	// MaxRetryAfter caps every wait the guard asks for or honours:
	// Retry-After, a reset, a backoff. Default defaultMaxRetryAfter (5 min);
	// see there for why. A server asking for more is held for the cap and
	// then asked again.
	MaxRetryAfter headroom.Duration `json:"maxRetryAfter,omitempty"`

	// MaxWait is the longest Acquire holds a caller for the quota; a longer
	// wait is refused at once with ReasonMaxWait. Default: MaxRetryAfter, so
	// Acquire only ever refuses for the context's deadline.
	MaxWait headroom.Duration `json:"maxWait,omitempty"`

	// QueueLimit is how many units' worth of attempts Acquire may hold for
	// a key while it has no room for them (no in-flight slot, or no
	// allowance); one more is refused at once (ReasonQueueFull). 0 refuses
	// every such attempt at once (ReasonNoPermit). nil, the default, holds
	// them all: the guard's specification holds an attempt until the key
	// has room, and a caller with a deadline waits its turn up to that
	// deadline, or is refused at once when the wait would outlast it, as an
	// HTTP client's callers expect. The same setting as
	// limit.Options.QueueLimit; docs/queueing.md lists every default.
	QueueLimit *int `json:"queueLimit,omitempty"`

	// TTL is how long a key's published state is trusted without a fresh
	// response; after it the key is treated as reset and its entry is
	// dropped. Default 1 h,
	// the longest common window (GitHub's hourly quota).
	TTL headroom.Duration `json:"ttl,omitempty"`

	// AssumedReset is how long a key inside its reserve is held when the
	// server publishes no reset (Shopify's used/size, IETF without t); after
	// it one probe goes out and its response tells the truth. Default 1 s:
	// Shopify's bucket leaks 2 requests a second on its Standard plan, so a
	// second frees the probe and one more.
	AssumedReset headroom.Duration `json:"assumedReset,omitempty"`

	// MeterProvider receives the guard's metrics (telemetry's
	// headroom.quota.*); nil means the global one.
	MeterProvider metric.MeterProvider `json:"-"`

	// KeyAttributes, when set, gives the attributes of a key's series in
	// the guard's metrics besides headroom.limiter and headroom.quota.key:
	// httpx labels its host keys with server.address and server.port this
	// way. A key it labels server.address "_other" (telemetry.OtherHosts)
	// counts in that one series and reports no gauges.
	KeyAttributes func(key string) []attribute.KeyValue `json:"-"`

	// Backoff is the per-key exponential backoff after a 429 or 503 that
	// carries neither Retry-After nor an exhausted quota with a reset
	// (the backoff GitHub and Microsoft Graph ask of clients throttled
	// without a hint), one curve per key, reset by a success. Its zero
	// fields mean Initial 1 s
	// (minimum_backoff_seconds), Multiplier 2 (backoff_multiplier), Jitter
	// 0.2 (backoff_jitter_percentage), Max 300 s (maximum_backoff_seconds);
	// MaxRetryAfter caps every wait further.
	Backoff headroom.Backoff `json:"backoff,omitzero"`

	// MaxKeys bounds how many keys have state at once; 0 means 1,024, as
	// many as an HTTP client keeps per-host limiters for. When a new key
	// comes and the bound is reached, the least recently used keys are
	// dropped, an eighth of the bound at a time, but never one with an
	// attempt in flight or waiting, or one a Retry-After or backoff still
	// blocks: what the guard learned of a key lasts while the key is in
	// use. A dropped key starts afresh, its first attempt a probe.
	MaxKeys int `json:"maxKeys,omitempty"`

	// MaxInFlight caps the requests in flight per key. 0, the default, sets
	// no cap: the limit shapes already offer Concurrency; 5 is a sensible
	// cap when one is wanted.
	MaxInFlight int `json:"maxInFlight,omitempty"`

	// Key maps a request to its key; nil means the request's host (the
	// URL's, with its port when given, else Request.Host). Use it for a token,
	// an endpoint (GitHub's search and core quotas differ on one host), or
	// a route.
	Key func(*http.Request) string `json:"-"`

	// Share, when set, lets keys share one state through the hint a
	// response carries (Quota.Key: the Discord bucket, the GitHub resource):
	// it returns the key of the shared state for a key and a hint, or "" to
	// keep the key's own. func(key, hint string) string { return "hint:" +
	// hint } makes every key that a response names with the same hint share
	// one state: use it with a Key that names routes (for Discord, a route
	// with its major parameter), never with the host alone, since on one
	// host GitHub's core and search quotas are different resources.
	Share func(key, hint string) string `json:"-"`

	// Reserves keeps more of the allowance back from requests of the lower
	// priority levels; see Reserves. The zero value keeps nothing more
	// back.
	Reserves Reserves `json:"reserves,omitzero"`

	// Seed seeds the backoff's jitter; 0, the default, draws a seed at
	// random. Guards with one seed, keys created in one order and one
	// sequence of responses draw the same waits: a simulator on virtual
	// time sets it to reproduce its runs.
	Seed uint64 `json:"-"`
}

// requestHost is the default key: the request's host (with port, when
// given).
func requestHost(r *http.Request) string {
	if r.URL != nil && r.URL.Host != "" {
		return r.URL.Host
	}
	return r.Host
}

// defaultBackoff is what the zero fields of Options.Backoff mean.
func defaultBackoff() headroom.Backoff {
	return headroom.Backoff{
		Initial: headroom.Duration(time.Second), Multiplier: 2, Jitter: new(0.2), Max: headroom.Duration(300 * time.Second),
	}
}

// config is Options with the defaults applied.
type config struct {
	name          string
	reserve       reserve
	levels        levelReserves // Options.Reserves by level
	maxRetryAfter time.Duration
	maxWait       time.Duration
	queueLimit    int64 // below 0: no bound
	ttl           time.Duration
	assumedReset  time.Duration
	backoff       headroom.Backoff
	maxInFlight   int
	maxKeys       int
	key           func(*http.Request) string
	share         func(key, hint string) string
	seed          uint64
	streams       *atomic.Uint64 // one jitter stream per key, in creation order
}

// Validate returns every problem with o at once, joined with errors.Join;
// each is a *headroom.ConfigError naming the field. It returns nil when New
// would succeed.
func (o *Options) Validate() error {
	l := problems.New("quota")
	o.check(l)
	return l.Err()
}

// check records o's problems on l.
func (o *Options) check(l *problems.List) {
	if o.ReserveUnits != nil && *o.ReserveUnits < 0 {
		l.Add("ReserveUnits", *o.ReserveUnits, "0 or more units")
	}
	if f := o.ReserveFraction; f != nil && (math.IsNaN(*f) || *f < 0 || *f >= 1) {
		l.Add("ReserveFraction", *f, "a fraction in [0, 1), such as 0.02")
	}
	durs := []struct {
		field string
		v     headroom.Duration
	}{
		{"MaxRetryAfter", o.MaxRetryAfter}, {"MaxWait", o.MaxWait}, {"TTL", o.TTL}, {"AssumedReset", o.AssumedReset},
	}
	for _, d := range durs {
		if d.v < 0 {
			l.Add(d.field, d.v, "0 (the default) or a duration above 0, such as \"1m\"")
		}
	}
	backoffcurve.Check(o.Backoff, l.At("Backoff"))
	if o.MaxInFlight < 0 {
		l.Add("MaxInFlight", o.MaxInFlight, "0 (no cap) or more")
	}
	if o.MaxKeys < 0 {
		l.Add("MaxKeys", o.MaxKeys, "0 (1,024) or more")
	}
	if q := o.QueueLimit; q != nil && *q < 0 {
		l.Add("QueueLimit", *q, "0 (refuse at once) or more; nil holds every attempt")
	}
	base := 0.02
	if o.ReserveFraction != nil {
		base = *o.ReserveFraction
	}
	o.Reserves.check(l, base)
}

// The check of the options other packages' options hold.
func init() { problems.Register((*Options).check) }

func (o *Options) config() config {
	c := config{
		name:          o.Name,
		reserve:       reserve{Fraction: 0.02},
		levels:        o.Reserves.levels(),
		maxRetryAfter: time.Duration(o.MaxRetryAfter),
		maxWait:       time.Duration(o.MaxWait),
		queueLimit:    -1,
		ttl:           time.Duration(o.TTL),
		assumedReset:  time.Duration(o.AssumedReset),
		backoff:       backoffcurve.WithDefaults(o.Backoff, defaultBackoff()),
		maxInFlight:   o.MaxInFlight,
		maxKeys:       cmp.Or(o.MaxKeys, defaultMaxKeys),
		key:           o.Key,
		share:         o.Share,
		seed:          o.Seed,
		streams:       new(atomic.Uint64),
	}
	if c.seed == 0 {
		c.seed = rand.Uint64()
	}
	if c.name == "" {
		c.name = "quota"
	}
	if o.QueueLimit != nil {
		c.queueLimit = int64(*o.QueueLimit)
	}
	if o.ReserveUnits != nil {
		c.reserve.Units = *o.ReserveUnits
	}
	if o.ReserveFraction != nil {
		c.reserve.Fraction = *o.ReserveFraction
	}
	if c.maxRetryAfter == 0 {
		c.maxRetryAfter = defaultMaxRetryAfter
	}
	if c.maxWait == 0 {
		c.maxWait = c.maxRetryAfter
	}
	if c.ttl == 0 {
		c.ttl = time.Hour
	}
	if c.assumedReset == 0 {
		c.assumedReset = time.Second
	}
	if c.key == nil {
		c.key = requestHost
	}
	return c
}
