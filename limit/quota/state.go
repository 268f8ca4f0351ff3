package quota

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/cenkalti/backoff/v4"
)

// The state of one key: what the server last published — remaining,
// limit, reset — the guard's own count since, what it has learned of how
// the server gives units back, the instant the key is blocked until, the
// backoff curve, the in-flight slots. Times are Unix nanoseconds; 0 means
// unknown. The rules, file by file:
//
//   - admit.go: an attempt is admitted while the count less its cost stays
//     at or above the reserve, and takes its cost off the count at once
//     (optimistic decrement: of N callers racing for R units above the
//     reserve, exactly R go). The first attempt to a key goes alone. After
//     a reset only a probe goes until its answer publishes figures, and at
//     most one every AssumedReset while none does.
//   - inflight.go: which attempts are still out when an answer arrives. A
//     figure is taken less the units sent after its attempt and not yet
//     answered: the server cannot have counted them.
//   - figures.go: how a response's figures change the count. A figure with
//     a later reset starts a new window; an earlier one is an answer that
//     came late; within a window a figure only lowers the count, except
//     where the rules of server.go say the count may rise.
//   - server.go and refill.go: what the guard learns of the server from its
//     figures, as TCP learns a path — whether it gives units back at its
//     resets (a fixed window, a sliding log spent in bursts) or as it goes
//     (a token bucket, a sliding counter, a log spent at a pace), how fast,
//     what it holds, how long its window is, whether another client spends
//     the same quota, and whether its figures say anything a count can use.
//     A gradual key refills its count at the rate learned and does not hold
//     to resets; a fixed key holds to each reset and probes there.
//   - backoff.go: throttles without figures.
//
// Silence below a publishing threshold. Some servers publish their figures
// only once most of the quota is used (SharePoint: from 80%). A 2xx with no
// quota headers and no Retry-After, for a key whose held reset has passed
// (or that is probing), says the key is back under that threshold: the
// guard forgets the published remaining and reset, and admits freely until
// a response publishes again — as many units at a time as silence vouches
// for, once the server has shown where it starts publishing (silence in
// figures.go). It keeps what it learned of the server. Before
// the held reset a silent 2xx changes nothing: endpoints of one key may
// differ in what they publish.
type entry struct {
	mu        sync.Mutex
	known     bool // remaining and limit came from a response
	remaining int64
	limit     int64
	window    int64 // the published or documented window, ns; 0 when neither
	// learned is the longest time to a reset a success has shown for the
	// bucket named by policy, bucket and limit: the window, as far as it
	// is known, when neither the headers nor the API's documents give it.
	learned int64
	policy  string
	bucket  string
	reset   int64 // when the window ends
	assumed bool  // reset was assumed, not published
	probing bool  // the reset passed: one probe at a time, until figures
	probeAt int64 // when probing, the next probe may go at this instant
	// probeSent is when the probe awaited went out: an answer to an
	// attempt sent before it is no answer to the probe.
	probeSent int64
	// gradual says the server gives units back over time, not at the
	// reset (server.go); fillAt is when remaining was last refilled.
	gradual bool
	fillAt  int64
	// minRTT is the shortest round trip an answer has shown.
	minRTT int64
	// continuous says the figures have shown units coming back between
	// resets, as a bucket's or a sliding counter's do: the key refills at
	// the rate they show (refill.go).
	continuous bool
	// last is the remaining the last figures showed; latestRem the one
	// the last answer with nothing else out showed, and lastUpTo the units
	// sent by then.
	last, latestRem, lastUpTo int64
	// quiet says a success has come without figures: the server publishes
	// only some of the time. figures counts the responses with figures.
	quiet   bool
	figures int
	// silentRoom is, once silence made the guard forget the figures of a
	// server that has shown where it starts publishing, the units that
	// may go before another answer: silence says no more than that.
	// silentAt is when silence last made room: an answer that never comes
	// (a transport error, a 5xx) holds no one longer than a window after.
	silentRoom   int64
	silentCapped bool
	silentAt     int64
	// alone counts the answers in a row, within a fixed window, whose
	// figures only this client's attempts explain.
	alone int
	// sharedAt is when the figures last showed another client spending the
	// quota.
	sharedAt int64
	// fixed says a probe's answer showed most of the limit back at a
	// reset: the server gives its units back at its resets.
	fixed bool
	// rate is how fast the server gives units back, learned (refill.go).
	rate refillRate
	// sub learns a window of at most a second (subsecond.go).
	sub subSecondLearner
	// bounds narrows the held reset by the figures of its window
	// (resetbound.go).
	bounds resetBounds
	// capacity is the most the server has shown it holds: the largest
	// remaining seen, with the units of the attempt it answered.
	capacity int64
	// fillFits and fillMisfits count the figures whose reset is, and is
	// not, when a bucket of the published policy would be full again.
	fillFits, fillMisfits int
	// floor is the lowest remaining a response has shown since the held
	// reset was taken: in a window that gives nothing back before its
	// reset, no later figure of that window climbs far above it.
	floor int64
	// openerSent is when the first attempt after the last window ended
	// went out, with openerUnits the units sent before it; bound is the
	// shortest time from such an attempt to a reset a success of its
	// window has shown: a window that began with that attempt is no
	// longer. openNext says the next attempt opens a window.
	openerSent, openerUnits, bound int64
	openNext                       bool
	// maxRemaining is the largest remaining a response has shown, and
	// noRoom says a success showed nothing left with no reset far ahead
	// (see roomless).
	maxRemaining int64
	noRoom       bool
	// cutAt is when the refill rate was last cut for a throttle.
	cutAt int64
	// early counts the figures that climbed before the reset of the one
	// before them (holds.go).
	early int
	// answered is when the latest attempt whose answer was seen went out.
	answered int64
	// documented says window is the API's documented window, not one the
	// headers published: what the figures show is then learned over it.
	documented bool
	blocked    int64 // Retry-After or backoff: nothing before this
	boStep     int64 // when the backoff last took a step
	bo         *backoff.ExponentialBackOff
	rng        *rand.Rand // the backoff's jitter, from Options.Seed
	// wake, when not nil, is closed when a response changes what the key
	// admits, so that callers waiting for a probe's answer go at once.
	wake chan struct{}
	// asked is when a request of each priority level last asked the key,
	// and demand its demand then, in units a nanosecond (priority.go);
	// kept only when Options.Reserves holds something.
	asked  [3]int64
	demand [3]float64
	// holding counts the callers Acquire holds for the key, by level.
	holding [3]int32
	// contacted says a response for the key has been seen; until then one
	// attempt goes at a time (see admit).
	contacted bool
	// admitted holds the last admissions (inflight.go).
	admitted [admittedKept]admission
	nAdm     int   // admissions recorded, in all
	units    int64 // units admitted, in all
	// answeredUnits is the units of the admitted attempts answered.
	answeredUnits int64
	refused       int64 // units of the attempts answered with a throttle, in all

	touched atomic.Int64          // last response (or slot) seen
	shared  atomic.Pointer[entry] // the state this key shares (Options.Share)
	sem     chan struct{}         // in-flight slots; nil without a cap
	waiting atomic.Int64          // units Acquire holds for the key (Options.QueueLimit)
	used    atomic.Uint64         // the key map's clock at the key's last use (keys)
}
