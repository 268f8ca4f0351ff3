package quota

import "time"

// Anthropic (docs.anthropic.com, "Rate limits"): anthropic-ratelimit-{requests, tokens,
// input-tokens, output-tokens}-{limit, remaining, reset}, four independent
// buckets whose reset is an RFC 3339 timestamp such as
// "2025-08-21T12:40:59Z" (seen in captured real responses). The timestamp is
// on the server's clock and is corrected with Date (see reset.go). A number
// in its place is read with the general rule.

var anthropicBuckets = [...]struct{ name, limit, remaining, reset string }{
	{"requests", "Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
	{"tokens", "Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
	{"input-tokens", "Anthropic-Ratelimit-Input-Tokens-Limit", "Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset"},
	{"output-tokens", "Anthropic-Ratelimit-Output-Tokens-Limit", "Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset"},
}

func (p *parser) anthropic(dst []Quota) []Quota {
	// Anthropic sends the four buckets together; the input and output
	// buckets are looked for only when the requests or tokens bucket is
	// there, which keeps the cost of a response from anyone else at two
	// lookups.
	if len(p.h[anthropicBuckets[0].remaining]) == 0 && len(p.h[anthropicBuckets[1].remaining]) == 0 {
		return dst
	}
	for i := range anthropicBuckets {
		b := &anthropicBuckets[i]
		v, ok := p.get(b.remaining)
		if !ok {
			continue
		}
		r, ok := count(v)
		if !ok {
			continue
		}
		unit := "tokens"
		if i == 0 {
			unit = "requests"
		}
		q := Quota{Dialect: anthropic, Policy: b.name, Unit: unit, Remaining: r}
		if v, ok := p.get(b.limit); ok {
			q.Limit, _ = count(v)
		}
		if v, ok := p.get(b.reset); ok {
			q.Reset, _ = p.rfc3339(v)
		}
		dst = append(dst, q)
	}
	return dst
}

// rfc3339 reads an RFC 3339 reset on the server's clock, or a number.
func (p *parser) rfc3339(v string) (time.Time, bool) {
	if _, ok := parseDecimal(v); ok {
		return p.resetString(v)
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, false
	}
	return p.absolute(t), true
}
