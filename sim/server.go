package sim

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// Server describes the model API's limiter: its kind, its window, what it
// publishes. The quota — units per Window — comes from the schedule
// (Config.Quota and the scenario). The zero value is the seeds' server: a
// sliding log of 60 s that publishes draft-03 headers from 80% of the
// quota.
//
// Kind is one of ServerKinds (ServerKindNamed reads looser spellings):
//
//   - "fixed-window" counts the units of each window and gives them all
//     back at its end (express-rate-limit, ulule/limiter,
//     envoyproxy/ratelimit);
//   - "sliding-log" keeps every accepted request until it leaves the
//     window: at most the quota in any window (the seeds' model,
//     SharePoint);
//   - "sliding-counter" counts this window and weighs the last one by the
//     part of it still inside the window (go-chi/httprate, Cloudflare,
//     HAProxy's freq_ctr);
//   - "token-bucket" is a bucket of Burst units refilled at the quota per
//     window, or GCRA, which admits the same requests (x/time/rate-based
//     servers, tollbooth, go-redis/redis_rate);
//   - "leaky-bucket" is nginx's limit_req: an excess that leaks at the
//     rate, up to Burst, served at once (NoDelay), after a delay, or in
//     part (Delay).
//
// Publish is one of Publishes (PublishNamed reads looser spellings). Every
// one but "none" and "envoy" sends Retry-After on a 429, in whole seconds
// rounded up (RFC 9110 §10.2.3 delay-seconds):
//
//   - "none" sends nothing, not even Retry-After (nginx's limit_req);
//   - "retry-after" sends Retry-After on a 429 and nothing else;
//   - "draft-6" sends RateLimit-Limit, RateLimit-Remaining,
//     RateLimit-Reset (delay-seconds, rounded up, left out when 0) and
//     RateLimit-Policy "limit;w=window seconds" on every response, as
//     express-rate-limit's standardHeaders "draft-6" does
//     (draft-ietf-httpapi-ratelimit-headers-06);
//   - "draft-3" sends RateLimit-Limit, -Remaining and -Reset with no
//     window, and only once 80% of the quota is used; on a 429 Reset
//     equals Retry-After. SharePoint Online sends them so ("based on
//     draft-03"), and the seeds' model API does;
//   - "x-ratelimit" sends X-RateLimit-Limit, -Remaining and -Reset as
//     epoch seconds, with a Date header, on every response (ulule/limiter,
//     go-chi/httprate, express-rate-limit's legacyHeaders);
//   - "envoy" sends X-RateLimit-Limit, -Remaining and -Reset as delta
//     seconds on every response, the 429 too, and no Retry-After, as
//     Envoy's local rate limit filter does with enable_x_ratelimit_headers
//     DRAFT_VERSION_03 (publish.go says what each field holds).
type Server struct {
	Kind   string        // "sliding-log"
	Window time.Duration // 60 s; 1 s to 24 h

	// Burst is the depth of a bucket. token-bucket: its capacity in units
	// (0: the first step's quota, a window's worth, as redis_rate's
	// PerSecond and PerMinute set it); the quota schedule changes the
	// refill rate, never the capacity. leaky-bucket: nginx's burst, the
	// excess it takes beyond the rate (0, nginx's default). Other kinds
	// have no bucket: 0.
	Burst int
	// NoDelay and Delay are nginx's limit_req nodelay and delay=
	// (leaky-bucket only): with neither, every request of the excess is
	// delayed until it conforms to the rate; NoDelay serves the excess at
	// once; Delay serves the first Delay units of it at once and delays the
	// rest.
	NoDelay bool
	Delay   int
	// Aligned makes a fixed window's windows multiples of Window from the
	// start of the run (envoyproxy/ratelimit); otherwise a window starts
	// with the first request after the last one ended (express-rate-limit's
	// MemoryStore, ulule/limiter, Redis INCR with EXPIRE).
	Aligned bool
	// UnitReset makes a bucket's published reset the time until one unit is
	// back; otherwise it is the time until the bucket is full again, as
	// redis_rate's ResetAfter and OpenAI's reset headers count it.
	UnitReset bool

	// Publish is what the API tells its clients ("draft-3").
	Publish string
	// EpochCeil rounds x-ratelimit's reset up to the next epoch
	// second, as express-rate-limit does (Math.ceil); otherwise it is
	// rounded down, as Go's time.Unix gives it to ulule/limiter and
	// go-chi/httprate.
	EpochCeil bool
}

// defaults returns s with its zero fields set to their defaults.
func (s Server) defaults() Server {
	if s.Kind == "" {
		s.Kind = kindSlidingLog
	}
	if s.Window == 0 {
		s.Window = defaultWindow
	}
	if s.Publish == "" {
		s.Publish = publishDraft3
	}
	return s
}

// String describes s (after Config.Defaults): "token bucket (burst 500), 10 s
// window, publishing draft-6".
func (s Server) String() string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(s.Kind, "-", " "))
	switch s.Kind {
	case kindFixedWindow:
		if s.Aligned {
			b.WriteString(" (aligned)")
		} else {
			b.WriteString(" (from the first request)")
		}
	case kindTokenBucket:
		if s.Burst > 0 {
			fmt.Fprintf(&b, " (burst %d", s.Burst)
		} else {
			b.WriteString(" (burst a window")
		}
		b.WriteString(s.resetNote())
	case kindLeakyBucket:
		fmt.Fprintf(&b, " (burst %d", s.Burst)
		switch {
		case s.NoDelay:
			b.WriteString(" nodelay")
		case s.Delay > 0:
			fmt.Fprintf(&b, " delay=%d", s.Delay)
		}
		b.WriteString(s.resetNote())
	}
	fmt.Fprintf(&b, ", %s window, publishing %s", humanWindow(s.Window), s.Publish)
	if s.Publish == publishXRateLimit && s.EpochCeil {
		b.WriteString(" (reset rounded up)")
	}
	return b.String()
}

// resetNote closes a bucket's parenthesis, naming a reset at one unit.
func (s Server) resetNote() string {
	if s.UnitReset {
		return ", reset at one unit)"
	}
	return ")"
}

func humanWindow(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return d.String()
}

// check records on l every problem with s (after defaults), a server with the
// quota schedule schedule and requests of up to maxCost units; each is a
// *headroom.ConfigError under l's setting.
func (s Server) check(l *problems.List, schedule []quotaStep, maxCost int) {
	bad, before := l.Add, l.Len()
	kindOK := slices.Contains(serverKinds, s.Kind)
	if !kindOK {
		bad("Kind", s.Kind, "one of "+strings.Join(serverKinds, ", "))
	}
	if !slices.Contains(publishes, s.Publish) {
		bad("Publish", s.Publish, "one of "+strings.Join(publishes, ", "))
	}
	windowOK := s.Window >= time.Second && s.Window <= 24*time.Hour
	if !windowOK {
		bad("Window", s.Window, "1s to 24h")
	}
	if s.Burst < 0 {
		bad("Burst", s.Burst, "0 or more")
	}
	if s.Delay < 0 {
		bad("Delay", s.Delay, "0 or more")
	}
	if !kindOK {
		return
	}
	s.validateForKind(bad)
	if l.Len() > before || !windowOK {
		return
	}
	s.validateSize(schedule, maxCost, bad)
}

// validateForKind reports the settings that s's kind or publish does not
// take.
func (s Server) validateForKind(bad func(field string, value any, want string)) {
	if s.Burst != 0 && !takesBurst(s.Kind) {
		bad("Burst", s.Burst, "0: only token-bucket and leaky-bucket have a bucket; the "+s.Kind+" has none")
	}
	if s.NoDelay && s.Kind != kindLeakyBucket {
		bad("NoDelay", s.NoDelay, "false: nodelay is nginx's, for leaky-bucket only, not "+s.Kind)
	}
	if s.Delay != 0 && s.Kind != kindLeakyBucket {
		bad("Delay", s.Delay, "0: delay is nginx's, for leaky-bucket only, not "+s.Kind)
	}
	if s.NoDelay && s.Delay != 0 {
		bad("Delay", s.Delay, "0 with NoDelay: nginx takes one or the other")
	}
	if s.Aligned && s.Kind != kindFixedWindow {
		bad("Aligned", s.Aligned, "false: aligned windows are for fixed-window only, not "+s.Kind)
	}
	if s.UnitReset && !takesBurst(s.Kind) {
		bad("UnitReset", s.UnitReset, "false: a reset at one unit is for token-bucket and leaky-bucket only, not "+s.Kind)
	}
	if s.EpochCeil && s.Publish != publishXRateLimit {
		bad("EpochCeil", s.EpochCeil, "false: an epoch reset rounded up is for x-ratelimit only, not "+s.Publish)
	}
}

// validateSize reports a bucket that the kind's arithmetic cannot count.
func (s Server) validateSize(schedule []quotaStep, maxCost int, bad func(field string, value any, want string)) {
	switch s.Kind {
	case kindTokenBucket:
		// The bucket counts in units × window nanoseconds (tokenbucket.go):
		// its capacity must fit, with room for a request on top.
		burst := s.Burst
		if burst == 0 && len(schedule) > 0 {
			burst = schedule[0].Units
		}
		if hi, lo := bits.Mul64(uint64(max(burst, maxCost, 1)), uint64(s.Window)); hi != 0 || lo > math.MaxInt64/4 {
			bad("Burst", max(burst, maxCost),
				fmt.Sprintf("fewer units: a bucket that large over a %v window is too large to count in nanoseconds", s.Window))
		}
	case kindLeakyBucket:
		// nginx counts the rate in thousandths of a unit a second: each
		// step's quota must leak at least that.
		for _, st := range schedule {
			if r := nginxRate(st.Units, s.Window); r < 1 {
				bad("Window", s.Window,
					fmt.Sprintf("a window in which %d units leak at nginx's smallest rate, 0.001 units a second, or faster", st.Units))
				break
			}
		}
		// Its excess is in thousandths, and a delay multiplies that by
		// 1000 again.
		if hi, lo := bits.Mul64(uint64(max(s.Burst, maxCost, s.Delay)), 1_000_000); hi != 0 || lo > math.MaxInt64/4 {
			bad("Burst", s.Burst, fmt.Sprintf("fewer units (with Delay %d): too large for nginx's thousandths", s.Delay))
		}
	}
}
