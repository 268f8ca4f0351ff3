package quota

// The de-facto X-RateLimit-* family and its relatives, as each API's
// rate-limit documentation describes it:
//
//   - GitHub: x-ratelimit-limit, -remaining, -used, -reset (epoch seconds),
//     -resource (the bucket: core, search, graphql…). Policy and Key are the
//     resource.
//   - Discord: X-RateLimit-Limit, -Remaining, -Reset (epoch seconds with
//     decimals), -Reset-After (delta seconds with decimals), -Bucket (the
//     shared-bucket id, the Key). Reset-After is preferred: it is relative,
//     so clock skew does not enter.
//   - X/Twitter: x-rate-limit-limit, -remaining, -reset (epoch seconds), and
//     the 24-hour caps x-app-limit-24hour-* and x-user-limit-24hour-*
//     (third-party listing; their reset is read with the general rule).
//   - Everyone else: X-RateLimit-Reset as epoch seconds, epoch milliseconds
//     or delta seconds, told apart by the rule in reset.go.
//
// A bucket is read only when its Remaining header is present and a
// non-negative number; the other keys are looked up only then.

const (
	hXLimit      = "X-Ratelimit-Limit"
	hXRemaining  = "X-Ratelimit-Remaining"
	hXReset      = "X-Ratelimit-Reset"
	hXResetAfter = "X-Ratelimit-Reset-After"
	hXBucket     = "X-Ratelimit-Bucket"
	hXResource   = "X-Ratelimit-Resource"
	hXUsed       = "X-Ratelimit-Used"

	hXDLimit     = "X-Rate-Limit-Limit"
	hXDRemaining = "X-Rate-Limit-Remaining"
	hXDReset     = "X-Rate-Limit-Reset"

	hXApp24Limit      = "X-App-Limit-24hour-Limit"
	hXApp24Remaining  = "X-App-Limit-24hour-Remaining"
	hXApp24Reset      = "X-App-Limit-24hour-Reset"
	hXUser24Limit     = "X-User-Limit-24hour-Limit"
	hXUser24Remaining = "X-User-Limit-24hour-Remaining"
	hXUser24Reset     = "X-User-Limit-24hour-Reset"
)

func (p *parser) xRateLimit(dst []Quota) []Quota {
	rem, ok := p.get(hXRemaining)
	if !ok {
		return dst
	}
	r, ok := count(rem)
	if !ok {
		return dst
	}
	q := Quota{Dialect: xRateLimit, Unit: "requests", Remaining: r}
	if v, ok := p.get(hXLimit); ok {
		q.Limit, _ = count(v)
	}
	if v, ok := p.get(hXResource); ok && v != "" {
		q.Dialect, q.Policy, q.Key = github, v, v
	} else if _, ok := p.get(hXUsed); ok {
		q.Dialect = github
	}
	if q.Dialect != github { // GitHub sends no Discord headers: two lookups saved
		if v, ok := p.get(hXBucket); ok && v != "" {
			q.Dialect, q.Key = discord, v
		}
		if v, ok := p.get(hXResetAfter); ok {
			if d, ok := parseDecimal(v); ok {
				q.Dialect = discord
				q.Reset = p.after(d.seconds())
			}
		}
	}
	if q.Reset.IsZero() {
		if v, ok := p.get(hXReset); ok {
			q.Reset, _ = p.resetString(v)
		}
	}
	return append(dst, q)
}

func (p *parser) xRateLimitDashed(dst []Quota) []Quota {
	if v, ok := p.get(hXDRemaining); ok {
		dst = p.simple(dst, xRateLimitDashed, "", v, hXDLimit, hXDReset)
		if v, ok := p.get(hXApp24Remaining); ok {
			dst = p.simple(dst, xRateLimitDashed, "app-24hour", v, hXApp24Limit, hXApp24Reset)
		}
		if v, ok := p.get(hXUser24Remaining); ok {
			dst = p.simple(dst, xRateLimitDashed, "user-24hour", v, hXUser24Limit, hXUser24Reset)
		}
	}
	return dst
}

// simple reads a remaining/limit/reset triple whose reset follows the
// general number rule.
func (p *parser) simple(dst []Quota, d string, policy, remaining, limitKey, resetKey string) []Quota {
	r, ok := count(remaining)
	if !ok {
		return dst
	}
	q := Quota{Dialect: d, Policy: policy, Unit: "requests", Remaining: r}
	if v, ok := p.get(limitKey); ok {
		q.Limit, _ = count(v)
	}
	if v, ok := p.get(resetKey); ok {
		q.Reset, _ = p.resetString(v)
	}
	return append(dst, q)
}
