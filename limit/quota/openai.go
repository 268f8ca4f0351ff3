package quota

import "time"

// OpenAI (platform.openai.com, "Rate limits"): two independent buckets, requests and
// tokens, each with x-ratelimit-limit-*, -remaining-* and -reset-*. The
// reset is a Go duration string ("1s", "6m0s", "12ms", "1.5s") and means the
// time until the bucket is back to full, not until the next request fits —
// so waiting for it errs long. Azure OpenAI sends the same names with the
// reset in seconds (third-party report); a number is read with the general
// rule of reset.go. Negative values (Azure's Responses API has been seen to
// send -1) are ignored.

const (
	hOAILimitRequests     = "X-Ratelimit-Limit-Requests"
	hOAIRemainingRequests = "X-Ratelimit-Remaining-Requests"
	hOAIResetRequests     = "X-Ratelimit-Reset-Requests"
	hOAILimitTokens       = "X-Ratelimit-Limit-Tokens"
	hOAIRemainingTokens   = "X-Ratelimit-Remaining-Tokens"
	hOAIResetTokens       = "X-Ratelimit-Reset-Tokens"
)

func (p *parser) openAI(dst []Quota) []Quota {
	if v, ok := p.get(hOAIRemainingRequests); ok {
		dst = p.openAIBucket(dst, "requests", v, hOAILimitRequests, hOAIResetRequests)
	}
	if v, ok := p.get(hOAIRemainingTokens); ok {
		dst = p.openAIBucket(dst, "tokens", v, hOAILimitTokens, hOAIResetTokens)
	}
	return dst
}

func (p *parser) openAIBucket(dst []Quota, name, remaining, limitKey, resetKey string) []Quota {
	r, ok := count(remaining)
	if !ok {
		return dst
	}
	q := Quota{Dialect: openAI, Policy: name, Unit: name, Remaining: r}
	if v, ok := p.get(limitKey); ok {
		q.Limit, _ = count(v)
	}
	if v, ok := p.get(resetKey); ok {
		q.Reset, _ = p.goDuration(v)
	}
	return append(dst, q)
}

// goDuration reads a reset given as a Go duration string, or as a number
// under the general rule.
func (p *parser) goDuration(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	if c := v[len(v)-1]; c >= '0' && c <= '9' || c == '.' {
		return p.resetString(v)
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return time.Time{}, false
	}
	return p.after(d), true
}
