package quota

import "time"

// documentedWindow is the window an API documents for a bucket whose
// headers do not publish one, so that a limit can be read as a rate; 0 when
// the dialect has no single window (Discord's buckets, the generic
// X-RateLimit-* family), which the guard then learns from the resets it is
// shown (State.Window). The figures are each API's documented windows, from
// its rate-limit page.
func documentedWindow(d, policy string) time.Duration {
	switch d {
	case ietf, ietf07, ietf06:
		// A policy without w: SharePoint Online, the one API known to send
		// these headers bare, sends them for its 1-minute app budget.
		return time.Minute
	case github:
		// Primary limits are per hour (5,000/h for a token); the search
		// resources count per minute.
		if policy == "search" || policy == "code_search" {
			return time.Minute
		}
		return time.Hour
	case xRateLimitDashed:
		// X: 15-minute windows, and separate 24-hour caps.
		if policy == "app-24hour" || policy == "user-24hour" {
			return 24 * time.Hour
		}
		return 15 * time.Minute
	case openAI, anthropic:
		// Requests and tokens per minute (RPM, TPM, ITPM, OTPM).
		return time.Minute
	case shopify:
		// A leaky bucket: 40 requests that drain at 2 a second (Standard
		// plan), so the limit is what 20 s let through.
		return 20 * time.Second
	}
	return 0
}

// maxLearnedWindow bounds the window learned from resets: a misread epoch
// must not turn into a window of years.
const maxLearnedWindow = int64(24 * time.Hour)
