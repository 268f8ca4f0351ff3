// Package quota is headroom's quota guard: it reads the rate limits a
// service publishes in its response headers, keeps them per key, and turns
// an attempt away — or holds it — while the key's remaining allowance is
// inside the reserve and the reset is ahead.
//
// # Parsing
//
// Parse reads every common dialect into one normalised Quota —
// Limit, Remaining, Reset as an instant, Window, Policy, Unit and a Key hint
// — and returns the most restrictive of the buckets a response publishes.
// The dialects:
//
//   - IETF draft-ietf-httpapi-ratelimit-headers -08 to -10: RateLimit and
//     RateLimit-Policy Structured-Field Lists with named policies (Cloudflare).
//   - draft -07: the RateLimit Dictionary, limit=100, remaining=50, reset=5.
//   - drafts ≤ -06: RateLimit-Limit, -Remaining, -Reset, with -03's policies
//     inside RateLimit-Limit (SharePoint) and -04..-06's RateLimit-Policy;
//     the window in X-Rate-Limit-Duration beside them (didip/tollbooth).
//   - X-RateLimit-Limit, -Remaining, -Reset, the reset in epoch seconds,
//     epoch milliseconds or delta seconds (ParseReset says how they are told
//     apart); GitHub's -Used and -Resource; Discord's -Reset-After and
//     -Bucket.
//   - x-rate-limit-* (X/Twitter) with its 24-hour caps.
//   - OpenAI's x-ratelimit-*-requests and -tokens, resets as Go durations.
//   - Anthropic's anthropic-ratelimit-*, resets in RFC 3339.
//   - Shopify's X-Shopify-Shop-Api-Call-Limit, used/size.
//
// ParseRetryAfter reads Retry-After (delay seconds, fractional too, or an
// HTTP-date in its three forms) and retry-after-ms. Every wait is capped at
// MaxRetryAfter (defaultMaxRetryAfter, 5 minutes, unless configured) and is
// never negative. Malformed fields are ignored; nothing panics. Parsing a
// typical response takes well under a microsecond and allocates nothing.
//
// # The guard
//
// A Guard keeps per key (the host by default; Options.Key can use a token,
// an endpoint or a route; Options.Share lets keys share a state through a
// hint such as the Discord bucket) the remaining allowance, limit, reset and
// the instant the key is blocked until, for Options.TTL after the last
// response that said anything.
//
//	g, err := quota.New(quota.Options{})
//	// before each attempt, on real time (waits up to ctx's deadline):
//	slot, err := g.Acquire(ctx, key, 1)
//	if err != nil {
//		return err // *limit.RateLimitedError{RetryAfter: until the reset}, or ctx.Err()
//	}
//	defer slot.Release()
//	// after it:
//	g.Observe(key, quota.Response{Status: resp.StatusCode, Header: resp.Header, Sent: slot.Sent(), Cost: 1}, time.Now())
//
// Taking a permit is one verb, as in golang.org/x/time/rate, with the cost
// always given (units for servers that count them: SharePoint's resource
// units, tokens; 1 for a request):
//
//   - TryAcquireAt(key, cost, now) decides at the time it is given and
//     returns at once: granted, or how long until it could be. It is what a
//     simulator on virtual time calls.
//   - Acquire(ctx, key, cost) is the shell on real time: it takes an
//     in-flight slot (Options.MaxInFlight) and admits the attempt, waiting
//     for both up to the context's deadline, or refusing at once with
//     Options.RefuseAtOnce; its refusals are *limit.RateLimitedError.
//
// An attempt is refused while remaining − cost would fall below the reserve
// (the larger of ReserveUnits and ReserveFraction × limit) with the reset
// ahead, or while a Retry-After or a backoff blocks the key; it is admitted
// otherwise and takes its cost off the key's remaining at once, so
// concurrent callers cannot all spend the last units (state.go says how
// responses then correct the count).
//
// The first attempt to a key goes alone: the others wait for its answer,
// so that a client with many callers learns the quota before it spends it.
// When the held reset passes, the guard does not assume the window is full
// again (a sliding window frees only its oldest units): it lets one probe
// through and holds the rest until a response publishes the figures (they
// go as soon as it does), with a new probe every AssumedReset while none
// does. The probe's answer tells how the server gives units back: most of
// the limit back means a fixed window, and the guard holds to each reset;
// less than half means a server that refills gradually (a sliding counter,
// a sliding log spent at a pace, a token bucket), and from then on the key
// refills at the published rate — Limit over the window — from the last
// figures, without holding to resets that move every second (state.go).
// A 2xx that publishes nothing after the held reset means the server has
// fallen silent below its publishing threshold (SharePoint publishes from
// 80% of the quota): the guard forgets the published remaining and reset
// and admits freely. State.PerMinute turns the published limit into units
// a minute, over the window the headers publish, else the one the API
// documents (Quota.Window), else the longest time to a reset a success of
// that bucket has shown (Discord's buckets have no single window and are
// learned so); an HTTP layer hands State.Limit and State.Window to an
// adaptive rate limiter's SetPublishedLimit. After a 429 or 503 that names
// neither a Retry-After nor an exhausted quota with a reset, the key backs
// off exponentially with jitter (github.com/cenkalti/backoff/v4), one step for the attempts that
// were in flight together (Response.Sent), none when a rate limiter paces
// the key (Response.Paced); a success resets it. Acquire's Slot says when
// the attempt went out, for Response.Sent.
//
// # Time
//
// The core — Parse, ParseRetryAfter, ParseReset, TryAcquireAt, Observe,
// State — takes the current time as an argument and neither reads a clock
// nor sleeps. Acquire is the thin shell that reads time.Now and blocks on
// timers and contexts; its tests run in testing/synctest bubbles.
package quota
