package acceptance

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Goals are what a cell asks of the subject client (headroom). A zero
// bound is no bound.
type Goals struct {
	// MinShare is the least share of the allowance its accepted units must
	// reach.
	MinShare float64
	// MaxThrottled is the largest share of its attempts that may be
	// answered 429 or 503. With OutageAttempts set, the outage's 503s are
	// left out of it and bounded by OutageAttempts instead.
	MaxThrottled float64
	// OutageAttemptsPerCaller bounds the attempts answered 503 by a server
	// in an outage, per caller; 0 means the cell has no outage.
	OutageAttemptsPerCaller int
	// NotBelowPeer asks for at least as many units as the peer client had
	// accepted in the same cell, less PeerMargin and peerTolerance of the
	// allowance; or, where the peer had more than peerThrottledAbove of its
	// attempts throttled, peerUnitsFraction of its units.
	NotBelowPeer bool
	// PeerMargin is how far below the peer, as a share of the allowance,
	// still counts as not below it: where the server publishes its quota,
	// the guard's reserve (quota.Options.ReserveFraction, 2% by default),
	// which it keeps back by design for other clients of the quota and
	// which a client that spends everything takes.
	PeerMargin float64
	// NoSelfImposed asks that no call fail on the client's own limiter's
	// refusal while its deadline still had time left.
	NoSelfImposed bool
	// NoFailures asks that no call fail at all.
	NoFailures bool
	// About says, in a sentence, what the goals are and why.
	About string
}

// guardReserve is the quota guard's default reserve, the share of a
// published quota it keeps back.
const guardReserve = 0.02

// "Not below the peer" forgives what two runs against two servers on one
// shared machine differ by, peerTolerance of the allowance; and where the
// peer spends more than peerThrottledAbove of its attempts on refusals,
// which a client that keeps to the goals does not, peerUnitsFraction of
// the peer's units is enough.
const (
	peerTolerance      = 0.01
	peerThrottledAbove = 0.05
	peerUnitsFraction  = 0.97
)

// DefaultGoals are the goals of an ordinary cell. Where the server
// publishes its quota the client has no excuse to guess: at least 95% of
// the allowance with at most 1% of attempts throttled. Where it publishes
// nothing, or only a Retry-After on a refusal, the client must find the
// limit by being refused: at least 90% with at most 5%. Either way it must
// do no worse than go-retryablehttp, and never give up on its own
// limiter's refusal while the caller's deadline still allowed it to wait.
func DefaultGoals(h Headers) Goals {
	if h.Published() {
		return Goals{MinShare: 0.95, MaxThrottled: 0.01, NotBelowPeer: true, PeerMargin: guardReserve, NoSelfImposed: true,
			About: "published quota: ≥ 95% of the allowance, ≤ 1% of attempts throttled, not below the peer (less the guard's 2% reserve), no self-imposed failure"}
	}
	return Goals{MinShare: 0.90, MaxThrottled: 0.05, NotBelowPeer: true, NoSelfImposed: true,
		About: "unpublished quota: ≥ 90% of the allowance, ≤ 5% of attempts throttled, not below the peer, no self-imposed failure"}
}

// HalvingGoals are the goals of a cell whose quota halves mid-run. The
// calls in flight when it halves, and the ones sent before the client can
// notice, meet the smaller quota, so the bounds are looser by a few
// points than DefaultGoals: published ≥ 90% and ≤ 3% throttled;
// unpublished ≥ 85% and ≤ 8%.
func HalvingGoals(h Headers) Goals {
	if h.Published() {
		return Goals{MinShare: 0.90, MaxThrottled: 0.03, NotBelowPeer: true, PeerMargin: guardReserve, NoSelfImposed: true,
			About: "quota halves mid-run, published: ≥ 90% of the allowance, ≤ 3% throttled, not below the peer (less the guard's 2% reserve), no self-imposed failure"}
	}
	return Goals{MinShare: 0.85, MaxThrottled: 0.08, NotBelowPeer: true, NoSelfImposed: true,
		About: "quota halves mid-run, unpublished: ≥ 85% of the allowance, ≤ 8% throttled, not below the peer, no self-imposed failure"}
}

// OutageGoals are the goals of a cell whose server answers 503 to
// everything for a moment mid-run, and refuses with 429 otherwise, so that
// its 503s are the outage's. The allowance already leaves the outage out. Outside it the cell is ordinary (DefaultGoals' bounds, the 503s of
// the outage left out of the throttled share); during it each caller may
// meet it at most twice — the attempt in flight and one retry — and no call
// may fail, since the outage is shorter than any call's deadline.
func OutageGoals(h Headers) Goals {
	g := DefaultGoals(h)
	g.OutageAttemptsPerCaller = 2
	g.NoFailures = true
	g.About = fmt.Sprintf("outage: ≥ %.0f%% of the allowance outside it, ≤ %.0f%% of other attempts throttled, ≤ 2 attempts per caller answered 503, no failed call, not below the peer",
		100*g.MinShare, 100*g.MaxThrottled)
	return g
}

// ResetGoals are the goals of a cell whose server resets some connections
// before they reach its limiter: DefaultGoals, and no failed call, since a
// GET whose connection was reset before any response is safe to send
// again and costs no quota.
func ResetGoals(h Headers) Goals {
	g := DefaultGoals(h)
	g.NoFailures = true
	g.About = fmt.Sprintf("connection resets: ≥ %.0f%% of the allowance, ≤ %.0f%% throttled, no failed call, not below the peer",
		100*g.MinShare, 100*g.MaxThrottled)
	return g
}

// Check returns the goals res.Subject missed, one readable line each with
// its figures; none when it met them all.
func (g Goals) Check(res CellResult) []string {
	s, p := res.Subject, res.Peer
	var misses []string
	if g.MinShare > 0 && s.Share() < g.MinShare {
		misses = append(misses, fmt.Sprintf("used %.1f%% of the allowance (%d of %.0f units): goal ≥ %.0f%%",
			100*s.Share(), s.Units, s.Allowance, 100*g.MinShare))
	}
	throttled, attempts := s.Throttled, s.Attempts
	if g.OutageAttemptsPerCaller > 0 {
		throttled -= s.Unavailable
		attempts -= s.Unavailable
		if limit := int64(g.OutageAttemptsPerCaller * res.Cell.Callers); s.Unavailable > limit {
			misses = append(misses, fmt.Sprintf("%d attempts answered 503 in the outage, %.1f per caller: goal ≤ %d per caller",
				s.Unavailable, float64(s.Unavailable)/float64(res.Cell.Callers), g.OutageAttemptsPerCaller))
		}
	}
	if share := ratio(float64(throttled), float64(attempts)); g.MaxThrottled > 0 && share > g.MaxThrottled {
		misses = append(misses, fmt.Sprintf("%.1f%% of attempts throttled (%d of %d): goal ≤ %.0f%%",
			100*share, throttled, attempts, 100*g.MaxThrottled))
	}
	if g.NotBelowPeer && !g.notBelowPeer(s, p) {
		misses = append(misses, fmt.Sprintf("%d units accepted, fewer than %s's %d", s.Units, p.Client, p.Units))
	}
	if g.NoSelfImposed && s.SelfImposed > 0 {
		misses = append(misses, fmt.Sprintf("%d calls failed on the client's own limiter's refusal with time left on their deadline: goal 0",
			s.SelfImposed))
	}
	if g.NoFailures && s.Failed > 0 {
		misses = append(misses, fmt.Sprintf("%d calls failed (%s): goal 0", s.Failed, FailureSummary(s.Failures)))
	}
	return misses
}

// notBelowPeer reports whether s had at least the peer's units, as
// NotBelowPeer says.
func (g Goals) notBelowPeer(s, p Result) bool {
	if float64(s.Units) >= float64(p.Units)-(g.PeerMargin+peerTolerance)*s.Allowance {
		return true
	}
	return p.ThrottledShare() > peerThrottledAbove && float64(s.Units) >= peerUnitsFraction*float64(p.Units)
}

// FailureSummary lists failure kinds by count, most first: "status 429 ×3,
// connection reset ×1".
func FailureSummary(failures map[string]int) string {
	kinds := slices.Collect(maps.Keys(failures))
	slices.SortFunc(kinds, func(a, b string) int {
		if failures[a] != failures[b] {
			return failures[b] - failures[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s ×%d", k, failures[k])
	}
	return strings.Join(parts, ", ")
}
