package sim

import (
	"net/http"
	"strconv"
	"time"
)

// What a server writes, and how it rounds. Every value is in whole seconds,
// as the header formats require:
//
//   - Retry-After (RFC 9110 §10.2.3, delay-seconds): the time until the
//     refused request would be accepted, rounded up, at least 1 s — a
//     client that waits exactly that long is accepted if nothing else came.
//   - A delta reset (draft-03's and draft-06's RateLimit-Reset): the time
//     from the response to the kind's reset instant, rounded up
//     (express-rate-limit: Math.ceil). Draft-03 writes at least 1, and on a
//     429 the Retry-After, as SharePoint does; draft-06 leaves the field out
//     when it comes to 0, as express-rate-limit does.
//   - An epoch reset (X-RateLimit-Reset): the reset instant's Unix seconds,
//     rounded down (Go's time.Unix: ulule/limiter, go-chi/httprate) or up
//     (Server.EpochCeil: express-rate-limit), with a Date header (HTTP-date,
//     the second rounded down) so that the client can take the difference
//     on the server's clock.
//
//   - Envoy's reset (the envoy dialect's X-RateLimit-Reset): delta seconds
//     rounded down, as Envoy's local rate limit filter writes them: it
//     takes the milliseconds its token bucket names and divides them by
//     1,000 in integers.
//
// The headers describe the limiter as it decided the request; relative
// values are written from the moment the response leaves, which is later
// by the server's delay for a request nginx holds.

// epoch is the wall-clock time of virtual time 0, for the engines that read
// time.Time and the headers that carry one.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// wholeSeconds rounds d up to whole seconds, at least 1 s.
func wholeSeconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	return max(s, 1) * time.Second
}

// ceilSeconds is d in seconds rounded up; 0 when d ≤ 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// epochSeconds is the Unix time of the virtual instant t, whole seconds
// rounded down, or up with ceil.
func epochSeconds(t time.Duration, ceil bool) int64 {
	u := epoch.Add(t)
	s := u.Unix()
	if ceil && u.Nanosecond() > 0 {
		s++
	}
	return s
}

// sendsRetryAfter reports whether a server publishing p answers a 429 with
// Retry-After: all but a silent one and Envoy's local rate limit, whose
// refusal carries its X-RateLimit fields alone.
func sendsRetryAfter(p string) bool { return p != publishNone && p != publishEnvoy }

// envoy writes the envoy dialect's fields into h, for a request decided as
// d whose response leaves at sent, under quota q. Envoy's local rate limit
// is a token bucket; for a bucket the fields are Envoy's own
// (local_ratelimit_impl.h, token_bucket_impl.cc): Limit is the bucket's
// depth (max_tokens); Remaining the whole units left after this request;
// Reset 0 while a unit remains, else the time one unit takes to refill at
// the rate, ceil(1000 / fill rate) milliseconds, divided by 1,000 in
// integers — not the time until the next unit, and 0 at any rate of a unit
// a second or more. A server of another kind writes the same three fields
// as Envoy's rate limit service would for it: Limit the quota, Reset the
// delta seconds until the kind's reset, rounded down.
func (a *modelAPI) envoy(h http.Header, sent time.Duration, q int, d *decision) {
	limit, reset := q, int64(0)
	switch a.server.Kind {
	case kindTokenBucket, kindLeakyBucket:
		limit = a.server.Burst
		if a.server.Kind == kindLeakyBucket {
			limit++ // nginx takes its burst and the request on time
		} else if limit == 0 {
			limit = a.schedule[0].Units
		}
		if d.remaining < 1 && q > 0 {
			perUnitMillis := (int64(a.server.Window/time.Millisecond) + int64(q) - 1) / int64(q)
			reset = perUnitMillis / 1000
		}
	default:
		reset = int64(max(d.resetAt-sent, 0) / time.Second)
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
}

// headers writes what the server publishes about a request decided as d,
// whose response leaves at sent, under quota q; nil when it publishes
// nothing on this response.
func (a *modelAPI) headers(sent time.Duration, q int, d *decision, retryAfter time.Duration) http.Header {
	var h http.Header
	switch a.server.Publish {
	case publishNone:
		return nil
	case publishRetryAfter:
		if retryAfter > 0 {
			h = make(http.Header, 1)
		}
	case publishDraft3:
		if float64(q-d.remaining) >= a.publishAt*float64(q) {
			reset := retryAfter // SharePoint makes them match on a 429
			if reset == 0 {
				reset = wholeSeconds(d.resetAt - sent)
			}
			h = make(http.Header, 4)
			h.Set("RateLimit-Limit", strconv.Itoa(q))
			h.Set("RateLimit-Remaining", strconv.Itoa(d.remaining))
			h.Set("RateLimit-Reset", strconv.Itoa(int(reset/time.Second)))
		} else if retryAfter > 0 {
			h = make(http.Header, 1)
		}
	case publishDraft6:
		h = make(http.Header, 5)
		h.Set("RateLimit-Policy", strconv.Itoa(q)+";w="+strconv.FormatInt(ceilSeconds(a.server.Window), 10))
		h.Set("RateLimit-Limit", strconv.Itoa(q))
		h.Set("RateLimit-Remaining", strconv.Itoa(d.remaining))
		if s := ceilSeconds(d.resetAt - sent); s > 0 {
			h.Set("RateLimit-Reset", strconv.FormatInt(s, 10))
		}
	case publishXRateLimit:
		h = make(http.Header, 5)
		h.Set("X-RateLimit-Limit", strconv.Itoa(q))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(d.remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(epochSeconds(d.resetAt, a.server.EpochCeil), 10))
		h.Set("Date", epoch.Add(sent).Format(http.TimeFormat))
	case publishEnvoy:
		h = make(http.Header, 3)
		a.envoy(h, sent, q, d)
	}
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	}
	return h
}
