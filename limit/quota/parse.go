package quota

import (
	"net/http"
	"time"
)

// The dialects Parse reads, by the names Quota.Dialect gives them; each
// names its header fields, which the APIs' own rate-limit pages and the
// IETF drafts define.
const (
	// ietf is draft-ietf-httpapi-ratelimit-headers -08 to -10: the
	// RateLimit and RateLimit-Policy Structured Field Lists (Cloudflare).
	ietf = "ietf"
	// ietf07 is draft -07: RateLimit as a Dictionary
	// (limit=100, remaining=50, reset=5), RateLimit-Policy integer items.
	ietf07 = "ietf-07"
	// ietf06 is drafts -00 to -06 and draft-polli: RateLimit-Limit,
	// RateLimit-Remaining, RateLimit-Reset, with -03's policies inside
	// RateLimit-Limit and -04..-06's in RateLimit-Policy (SharePoint, envoy,
	// express-rate-limit draft-6).
	ietf06 = "ietf-06"
	// xRateLimit is the de-facto X-RateLimit-Limit, -Remaining, -Reset.
	xRateLimit = "x-ratelimit"
	// github is xRateLimit with X-RateLimit-Used or X-RateLimit-Resource.
	github = "github"
	// discord is xRateLimit with X-RateLimit-Reset-After or -Bucket.
	discord = "discord"
	// xRateLimitDashed is x-rate-limit-limit, -remaining, -reset (X/Twitter),
	// with the x-app-limit-24hour-* and x-user-limit-24hour-* caps.
	xRateLimitDashed = "x-rate-limit"
	// openAI is x-ratelimit-{limit,remaining,reset}-{requests,tokens}, the
	// reset a Go duration string such as "6m0s".
	openAI = "openai"
	// anthropic is anthropic-ratelimit-{requests,tokens,input-tokens,
	// output-tokens}-{limit,remaining,reset}, the reset in RFC 3339.
	anthropic = "anthropic"
	// shopify is X-Shopify-Shop-Api-Call-Limit: used/size.
	shopify = "shopify"
)

// Quota is one published bucket or policy, normalised.
type Quota struct {
	// Dialect names the header family it came from: "ietf" (the IETF
	// draft's RateLimit and RateLimit-Policy lists, -08 on), "ietf-07" (its
	// RateLimit dictionary), "ietf-06" (RateLimit-Limit, -Remaining,
	// -Reset), "x-ratelimit" (X-RateLimit-*), "github", "discord",
	// "x-rate-limit" (X's x-rate-limit-*), "openai", "anthropic" or
	// "shopify".
	Dialect string
	// Policy names the bucket when the response names several: the IETF
	// policy name, "requests" or "tokens" (OpenAI), "input-tokens"
	// (Anthropic), the GitHub resource ("core", "search"), "app-24hour"
	// (X). Empty for a single unnamed bucket.
	Policy string
	// Unit is what the quota counts: "requests" unless the server says
	// otherwise (IETF qu, OpenAI and Anthropic tokens).
	Unit string
	// Limit is the quota per window; 0 when not published.
	Limit int64
	// Remaining is what is left of it; never negative.
	Remaining int64
	// Reset is when the quota is restored, never before now; the zero time
	// when not published (Shopify, IETF without t). For OpenAI it is when the
	// bucket is full again, not when the next request would fit.
	Reset time.Time
	// Window is the time window of Limit: published (IETF w), else the
	// one the API documents for the dialect (a minute for OpenAI, an hour
	// for GitHub's core, 15 minutes for X…); 0 when neither (Discord, the
	// generic X-RateLimit-* family).
	Window time.Duration
	// Key is a hint of which requests share this bucket: the Discord bucket
	// id, the GitHub resource, the IETF partition key (base64 text).
	Key string

	// documented says Window is the API's documented window, not one the
	// headers published.
	documented bool
}

// maxQuotas is how many buckets Parse looks at in one response; more are
// ignored. Responses carry one to four.
const maxQuotas = 8

// Parse reads the rate-limit headers of a response and returns the most
// restrictive of the buckets they publish, or false when they publish none.
// Every dialect the package knows is tried; a field that is malformed is
// ignored, never a panic. now is when the response was read; relative
// values count from it (see ParseReset for how numbers are read and when
// Date is used).
//
// The most restrictive bucket is an exhausted one (nothing remaining) if
// any, the one with the latest reset among those; otherwise the one with the
// smallest fraction of its limit remaining. The Guard picks with its reserve
// instead.
//
// Header keys are looked up in canonical form (as net/http stores them and
// Header.Set writes them), and only the keys the dialects use. A response
// served from a cache (Age above 0) is ignored, as the IETF draft asks.
// Retry-After is read separately, by ParseRetryAfter.
func Parse(h http.Header, now time.Time) (Quota, bool) {
	var buf [maxQuotas]Quota
	qs := parseAll(h, now, buf[:0])
	if len(qs) == 0 {
		return Quota{}, false
	}
	return qs[pick(qs, reserve{})], true
}

// parseAll appends every bucket the headers publish to dst and returns it.
// With room in dst it does not allocate.
func parseAll(h http.Header, now time.Time, dst []Quota) []Quota {
	if len(h) == 0 {
		return dst
	}
	p := parser{h: h, now: now}
	if v, ok := p.get("Age"); ok {
		// RFC 9111 §4.2.3: a positive current_age is a stored response;
		// draft-ietf-httpapi-ratelimit-headers says to ignore its RateLimit fields.
		if d, ok := parseDecimal(v); ok && (d.whole > 0 || d.nanos > 0) {
			return dst
		}
	}
	dst = p.ietf(dst)
	dst = p.ietf06(dst)
	dst = p.xRateLimit(dst)
	dst = p.xRateLimitDashed(dst)
	dst = p.openAI(dst)
	dst = p.anthropic(dst)
	dst = p.shopify(dst)
	for i := range dst {
		if dst[i].Window == 0 {
			dst[i].Window = documentedWindow(dst[i].Dialect, dst[i].Policy)
			dst[i].documented = dst[i].Window > 0
		}
	}
	return dst
}

// reserve is how much of a published quota to leave unspent: the larger of
// Units and Fraction × Limit.
type reserve struct {
	Units    int64
	Fraction float64
}

// of returns the reserve for a bucket of the given limit.
func (r reserve) of(limit int64) int64 {
	v := r.Units
	if limit > 0 && r.Fraction > 0 {
		if f := int64(r.Fraction * float64(limit)); f > v {
			v = f
		}
	}
	return v
}

// pick returns the index of the most restrictive bucket: one inside the
// reserve (remaining ≤ reserve) with the latest reset if any — a published
// reset ranks above none; otherwise the one with the smallest fraction of
// its limit left above the reserve.
func pick(qs []Quota, r reserve) int {
	best, bestIn := 0, false
	var bestFrac float64
	for i := range qs {
		q := &qs[i]
		res := r.of(q.Limit)
		in := q.Remaining <= res
		frac := 1.0
		if q.Limit > 0 {
			frac = float64(q.Remaining-res) / float64(q.Limit)
		}
		if i == 0 {
			bestIn, bestFrac = in, frac
			continue
		}
		b := &qs[best]
		switch {
		case in != bestIn:
			if !in {
				continue
			}
		case in:
			if !q.Reset.After(b.Reset) {
				continue
			}
		default:
			if frac > bestFrac || frac == bestFrac && !q.Reset.After(b.Reset) {
				continue
			}
		}
		best, bestIn, bestFrac = i, in, frac
	}
	return best
}

// count reads a non-negative integer count (remaining, limit). Decimals such
// as "40.0" are read and truncated; anything else is refused.
func count(v string) (int64, bool) {
	d, ok := parseDecimal(v)
	return d.whole, ok
}
