package quota

import "time"

// The IETF draft-ietf-httpapi-ratelimit-headers in its three shapes:
//
//   - -08 to -10 (Cloudflare since 2025-09): two Structured-Field Lists,
//     RateLimit-Policy: "burst";q=100;w=60,"daily";q=1000;w=86400 and
//     RateLimit: "burst";r=50;t=30. Items are joined by name; q is the quota,
//     w the window in seconds, qu the unit, r what remains, t the seconds
//     until more becomes available, pk a partition key.
//   - -07: RateLimit as a Dictionary, limit=100, remaining=50, reset=5, with
//     RateLimit-Policy: 100;w=10 (integer items).
//   - -06 and earlier: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset
//     (delay-seconds), policies in RateLimit-Policy: 10;w=1, 50;w=60
//     (-04..-06) or inside RateLimit-Limit: 10, 10;w=1, 50;w=60 (-03 and
//     earlier, SharePoint), where the first member is the limit.
//
// "Malformed RateLimit header fields MUST be ignored": a field that does not
// parse is dropped whole. A member with a negative or non-integer r, q, w or
// t is skipped. RateLimit-Policy is informative ("MAY be ignored"), so a
// malformed policy field leaves the limits without Limit and Window.

const maxPolicies = 8

// Pre-canonicalised header keys (textproto.CanonicalMIMEHeaderKey).
const (
	hRateLimit          = "Ratelimit"
	hRateLimitPolicy    = "Ratelimit-Policy"
	hRateLimitLimit     = "Ratelimit-Limit"
	hRateLimitRemaining = "Ratelimit-Remaining"
	hRateLimitReset     = "Ratelimit-Reset"
	// hRateLimitDuration is didip/tollbooth's window, in seconds, sent
	// beside the bare draft fields.
	hRateLimitDuration = "X-Rate-Limit-Duration"
)

func (p *parser) ietf(dst []Quota) []Quota {
	lines := p.h[hRateLimit]
	if len(lines) == 0 {
		return dst
	}
	if sfLooksLikeDict(lines[0]) {
		return p.ietf07(dst, lines)
	}
	var lb, pb [maxPolicies]sfMember
	limits, ok := sfParse(lines, false, lb[:0])
	if !ok {
		return dst
	}
	policies, ok := sfParse(p.h[hRateLimitPolicy], false, pb[:0])
	if !ok {
		policies = nil
	}
	for i := range limits {
		m := &limits[i]
		if m.bad || !m.hasR || (m.kind != sfString && m.kind != sfToken) {
			continue
		}
		q := Quota{Dialect: ietf, Policy: m.str, Unit: "requests", Remaining: m.r, Key: m.pk}
		if m.hasT {
			q.Reset = p.after(decimal{whole: m.t}.seconds())
		}
		if m.hasQ { // the appendix example puts q on the limit item
			q.Limit = m.q
		}
		for j := range policies {
			pol := &policies[j]
			if pol.bad || pol.str != m.str || (pol.kind != sfString && pol.kind != sfToken) {
				continue
			}
			if pol.hasQ {
				q.Limit = pol.q
			}
			if pol.hasW {
				q.Window = decimal{whole: pol.w}.seconds()
			}
			if pol.qu != "" {
				q.Unit = pol.qu
			}
			if q.Key == "" {
				q.Key = pol.pk
			}
			break
		}
		dst = append(dst, q)
	}
	return dst
}

// ietf07 reads RateLimit: limit=100, remaining=50, reset=5.
func (p *parser) ietf07(dst []Quota, lines []string) []Quota {
	var mb [maxPolicies]sfMember
	members, ok := sfParse(lines, true, mb[:0])
	if !ok {
		return dst
	}
	q := Quota{Dialect: ietf07, Unit: "requests"}
	var hasRemaining bool
	// Later members win, as for a Dictionary with a repeated key.
	for i := range members {
		m := &members[i]
		if m.kind != sfInteger || m.neg {
			continue
		}
		switch m.key {
		case "limit":
			q.Limit = m.num
		case "remaining":
			q.Remaining, hasRemaining = m.num, true
		case "reset":
			q.Reset = p.after(decimal{whole: m.num}.seconds())
		}
	}
	if !hasRemaining {
		return dst
	}
	q.Window = p.integerPolicyWindow(q.Limit, p.h[hRateLimitPolicy])
	return append(dst, q)
}

// ietf06 reads RateLimit-Limit, -Remaining and -Reset.
func (p *parser) ietf06(dst []Quota) []Quota {
	rem, ok := p.get(hRateLimitRemaining)
	if !ok {
		return dst
	}
	m, ok := sfItem(rem)
	if !ok || m.kind != sfInteger || m.neg {
		return dst
	}
	q := Quota{Dialect: ietf06, Unit: "requests", Remaining: m.num}
	if lines := p.h[hRateLimitLimit]; len(lines) > 0 {
		var lb [maxPolicies]sfMember
		// -03: "10, 10;w=1, 50;w=60": the first member is the limit,
		// the others are policies.
		if ms, ok := sfParse(lines, false, lb[:0]); ok && len(ms) > 0 && ms[0].kind == sfInteger && !ms[0].neg {
			q.Limit = ms[0].num
			for i := 1; i < len(ms); i++ {
				if ms[i].kind == sfInteger && ms[i].num == q.Limit && ms[i].hasW && !ms[i].bad {
					q.Window = decimal{whole: ms[i].w}.seconds()
					break
				}
			}
		}
	}
	if v, ok := p.get(hRateLimitReset); ok {
		// delay-seconds by the draft; read with the general rule so that a
		// server sending an epoch here is not taken for decades.
		if r, ok := sfItem(v); ok && (r.kind == sfInteger || r.kind == sfDecimal) && !r.neg {
			q.Reset = p.resetNumber(decimal{whole: r.num})
		}
	}
	if q.Window == 0 {
		q.Window = p.integerPolicyWindow(q.Limit, p.h[hRateLimitPolicy])
	}
	if v, ok := p.get(hRateLimitDuration); ok && q.Window == 0 {
		if d, ok := parseDecimal(v); ok && d.whole > 0 {
			q.Window = d.seconds()
		}
	}
	return append(dst, q)
}

// integerPolicyWindow reads "10;w=1, 50;w=60" and returns the window of the
// policy whose quota is limit, or of the first one when limit is unknown.
func (p *parser) integerPolicyWindow(limit int64, lines []string) time.Duration {
	if len(lines) == 0 {
		return 0
	}
	var pb [maxPolicies]sfMember
	ms, ok := sfParse(lines, false, pb[:0])
	if !ok {
		return 0
	}
	for i := range ms {
		m := &ms[i]
		if m.bad || !m.hasW || m.kind != sfInteger {
			continue
		}
		if limit == 0 || m.num == limit {
			return decimal{whole: m.w}.seconds()
		}
	}
	return 0
}
