package fleet

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// Options configure a shared limiter. Processes whose limiters have the
// same Prefix and Name, on the same Redis, share one limit; so give each
// quota its own Name, and build it with the same shape everywhere.
type Options struct {
	// Name names the limit in Redis, errors and telemetry; required.
	Name string
	// Prefix starts every key, default "headroom". Keys are
	// "{Prefix:Name}:kind": the braces are a Redis Cluster hash tag, so
	// one limit's keys share a slot.
	Prefix string

	// Segments is how finely the window slides (PerWindow only); 0 means 8.
	Segments int

	// QueueLimit is how many permits' (units') worth of this process's
	// callers may wait, in FIFO order, for room; one more is refused at
	// once (ReasonQueueFull). 0 refuses at once with the exact RetryAfter.
	// Left out (nil), it takes the kind's default, package limit's: the
	// limiters refuse at once, and the shared quota, a quota guard, holds
	// every attempt until the key has room, up to the context's deadline.
	QueueLimit *int

	// Batch, above 1, lets the process take at least Batch permits in
	// one round trip when several of its callers want permits at once,
	// and hand them out itself; what is left serves the next callers.
	// Redis then sees a fraction of the calls; in exchange the fleet may
	// admit up to Batch permits per process more than the limit over a
	// span (docs/fleet.md). Without it, callers that come while a round
	// trip is out still share the next one, which asks for exactly what
	// they want.
	Batch int

	// Shards, above 1, spreads the limit over that many keys, each with a
	// hash tag of its own, so that a Redis Cluster serves them from as
	// many slots and, as it places them, masters: one shard's master no
	// longer carries every acquire of the limit. Each process draws from
	// one shard, the one of its rank among Instances' members (which must
	// be an *Instances), and each shard holds the share of the limit of
	// the processes it serves, rebalanced as processes come and go. The
	// largest cost is then the burst (PerWindow: the permits) over twice
	// Shards. docs/fleet.md has the bound and the model of when it pays.
	Shards int

	// FailOpen chooses what happens while Redis cannot be reached. False,
	// the default, fails closed: AcquireN returns an *UnavailableError
	// (ErrUnavailable), never a throttle. True fails open to this
	// process's share: the limit divided by Instances' last count,
	// enforced in the process.
	FailOpen bool
	// Instances counts the processes sharing the limit, for FailOpen's
	// share; nil counts one. An *Instances keeps its last count while
	// Redis is down.
	Instances adaptive.InstanceCounter

	// Timeout bounds every call to Redis; default 100ms.
	Timeout time.Duration

	// MeterProvider receives a shared limiter's leases, refusals, queue,
	// waits and throttles, under the names and with the kinds of package
	// limit's limiters, and the Redis latency and errors; nil means the
	// global one.
	MeterProvider metric.MeterProvider

	// Logger receives the failure policy's events: failing open (Warn) or
	// closed (Error) while Redis is out of reach, summarised once a
	// minute, and Redis answering again (Info). nil logs nothing.
	Logger *slog.Logger
}

// Defaults.
const (
	defaultPrefix   = "headroom"
	defaultTimeout  = 100 * time.Millisecond
	defaultSegments = 8
)

// Bounds that keep the scripts' microsecond arithmetic exact.
const (
	maxPermitsPerSecond = 1e6 // an emission interval of 1 µs
	maxPermits          = 1e9
)

func (o *Options) withDefaults() Options {
	c := *o
	if c.Prefix == "" {
		c.Prefix = defaultPrefix
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.Segments == 0 {
		c.Segments = defaultSegments
	}
	if c.Instances == nil {
		c.Instances = oneInstance{}
	}
	return c
}

// queueLimit is the limiters' queue: QueueLimit, 0 when nil.
func (o *Options) queueLimit() int {
	if o.QueueLimit == nil {
		return 0
	}
	return *o.QueueLimit
}

// key is the Redis key of kind for this limit.
func (o *Options) key(kind string) string {
	return "{" + o.Prefix + ":" + o.Name + "}:" + kind
}

// Validate returns every problem with o at once, joined with errors.Join,
// each a *headroom.ConfigError naming its field. The constructors return
// the same problems, named Options.Field, with those of their other
// arguments.
func (o *Options) Validate() error {
	l := problems.New("fleet")
	o.check(l)
	return l.Err()
}

// check records on l the problems with o.
func (o *Options) check(l *problems.List) {
	if o.Name == "" {
		l.Add("Name", o.Name, "a name: processes that share a limit share its name")
	}
	if strings.ContainsAny(o.Name+o.Prefix, "{}") {
		l.Add("Name", o.Prefix+":"+o.Name, "no braces: they delimit the key's hash tag")
	}
	if o.Segments < 0 || o.Segments > 1000 {
		l.Add("Segments", o.Segments, "0 (8) to 1000")
	}
	if o.QueueLimit != nil && *o.QueueLimit < 0 {
		l.Add("QueueLimit", *o.QueueLimit, "nil (the kind's default), 0 (refuse at once) or more permits")
	}
	if o.Batch < 0 || o.Batch > maxPermits {
		l.Add("Batch", o.Batch, "0 (off) to 1e9 permits")
	}
	if o.Shards < 0 || o.Shards > 1024 {
		l.Add("Shards", o.Shards, "0 or 1 (one key) to 1024")
	}
	if _, ok := o.Instances.(*Instances); o.Shards > 1 && !ok {
		l.Add("Instances", o.Instances, "an *Instances of the fleet when Shards is above 1: a process's rank picks its shard")
	}
	if o.Timeout < 0 {
		l.Add("Timeout", o.Timeout, "a duration above 0 (0: 100ms)")
	}
}

// problems returns every problem with o, named Options.Field, and those
// args records of a constructor's other arguments.
func (o *Options) problems(args func(l *problems.List)) error {
	l := problems.New("fleet")
	o.check(l.At("Options"))
	args(l)
	return l.Err()
}

// maxSpan is the longest a full bucket may take to refill, and the longest
// window: 2^60 ns, about 36 years, as package limit's token bucket allows.
// The scripts keep times in µs as doubles, exact to a fraction of a µs up
// to 2^53 µs (285 years), and a RetryAfter must fit a time.Duration.
const maxSpan = time.Duration(1 << 60)

// checkShards records on l a limit of size permits (PerSecond's burst,
// PerWindow's permits, named field) that does not spread over o.Shards:
// each shard's share must hold at least one.
func (o *Options) checkShards(l *problems.List, field string, size int) {
	if o.Shards > 1 && size < 2*o.Shards {
		l.Add(field, size, fmt.Sprintf("at least %d for %d shards: twice Shards, so that every shard's share holds a permit", 2*o.Shards, o.Shards))
	}
}

// checkRate records on l the problems with PerSecond's rate and burst.
func checkRate(l *problems.List, rate float64, burst int) {
	n := l.Len()
	if !(rate > 0 && rate <= maxPermitsPerSecond) {
		l.Add("permitsPerSecond", rate, "above 0, at most 1e6")
	}
	if burst < 0 || burst > maxPermits {
		l.Add("burst", burst, "0 (1) to 1e9 permits")
	}
	if b := float64(max(burst, 1)); l.Len() == n && b/rate*float64(time.Second) > float64(maxSpan) {
		l.Add("permitsPerSecond", rate, fmt.Sprintf("at least %.3g a second for a burst of %.0f: a full bucket refills within 2^60 ns (about 36 years)",
			b*float64(time.Second)/float64(maxSpan), b))
	}
}

// checkWindow records on l the problems with PerWindow's permits and
// window.
func checkWindow(l *problems.List, permits int, window time.Duration) {
	if permits < 1 || permits > maxPermits {
		l.Add("permits", permits, "1 to 1e9")
	}
	if window < time.Millisecond || window > maxSpan {
		l.Add("window", window, "1ms to 2^60 ns (about 36 years)")
	}
}

// oneInstance counts one process: the Instances nil means.
type oneInstance struct{}

func (oneInstance) Instances() int { return 1 }
