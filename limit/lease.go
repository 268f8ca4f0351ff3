package limit

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/limit/concurrency"
)

// leaseOwner is a limiter of this package that frees something on release.
// release is called at most once per lease, with the copy the caller
// released (cost, grant time, outcome). It takes the lease by value: a
// pointer passed through an interface method escapes, and would move every
// caller's Lease to the heap.
type leaseOwner interface {
	release(l Lease)
}

// ownerRef boxes a limiter's leaseOwner behind one pointer, so that a lease
// record holds one word for it. Each limiter holds one, pointing at itself.
type ownerRef struct{ leaseOwner }

// A Releaser frees what a lease made by NewLease holds: a Limiter written
// outside this package hands out such leases. Release calls ReleaseLease
// once per lease, however many copies of it are released, with the copy that
// was released (its Cost, adaptive.Outcome and RetryAfter).
type Releaser interface {
	ReleaseLease(l Lease)
}

// leaseRecord is what every copy of one lease shares, so that only the
// first Release of any copy frees its permits. Records are reused: gen
// counts the leases a record has served, and a lease matches its record only
// while gen is still the value it was granted with. A copy released late
// finds a later gen and frees nothing, even when the record now serves
// another lease.
//
// A spent record serves the leases of a limiter whose permits are spent when
// granted (PerSecond, PerWindow): their Release frees nothing, so there is
// nothing to free twice, and they skip the pool and the compare-and-swap.
// All such a lease teaches is a throttle, which each copy counts when it is
// released, straight into the limiter's recorder (spent): no call back to
// the limiter.
//
// A ticket record serves the leases of one permit of a Concurrency
// limiter: the bulkhead's slot table is the record, and the lease's gen is
// its ticket, which frees the permit once however many copies give it
// back (concurrency.Bulkhead.Give): one compare-and-swap, no pool.
type leaseRecord struct {
	gen      atomic.Uint64
	owner    *ownerRef
	releaser Releaser
	spent    *metrics.Limiter
	slots    *concurrency.Bulkhead
	// waiting is the owner's count of callers that wait for a slot: a
	// ticket's release calls back only when one does, or to count a
	// throttle.
	waiting *atomic.Int64
}

var leaseRecords = sync.Pool{New: func() any { return new(leaseRecord) }}

// leaseSpec is a lease's cost and what the caller reported on it, in one
// word: with it a Lease is four words in four fields, which the compiler
// keeps in registers. A fifth field would move every Lease an Acquire
// returns through memory: 8 to 25 ns a grant, by shape.
type leaseSpec struct {
	cost int32
	// report holds the adaptive.Outcome in its low two bits and the Retry-After
	// hint above them, in whole milliseconds.
	report uint32
}

const (
	outcomeBits   = 2
	outcomeMask   = 1<<outcomeBits - 1
	maxRetryAfter = (1<<(32-outcomeBits) - 1) * time.Millisecond // about 12.4 days
)

func (s leaseSpec) outcome() adaptive.Outcome { return adaptive.Outcome(s.report & outcomeMask) }

func (s leaseSpec) retryAfter() time.Duration {
	return time.Duration(s.report>>outcomeBits) * time.Millisecond
}

// A Lease is the permit a Limiter granted. It is a small value: keep it in a
// variable and call Release when the call it guarded has ended, however it
// ended. Copies of a lease are one lease: the first Release of any copy
// frees its permits and later ones free nothing. The zero Lease holds
// nothing and is safe to release.
//
// The lease is the measurement: before Release, report what
// the call taught the limiter with Throttle, Drop or Ignore; a lease released
// without a report counts as a success.
type Lease struct {
	record  *leaseRecord
	gen     uint64
	granted time.Duration // on the owner's monotonic axis
	spec    leaseSpec
}

// newLease is a lease of cost permits from owner, granted at granted.
func newLease(owner *ownerRef, granted time.Duration, cost int) Lease {
	r := leaseRecords.Get().(*leaseRecord)
	r.owner = owner
	return Lease{record: r, gen: r.gen.Load(), granted: granted, spec: leaseSpec{cost: int32(cost)}}
}

// spentLease is a lease of cost permits spent when granted, whose record is
// the limiter's own spent record.
func spentLease(r *leaseRecord, granted time.Duration, cost int) Lease {
	return Lease{record: r, granted: granted, spec: leaseSpec{cost: int32(cost)}}
}

// NewLease returns a lease of cost permits owned by r, granted at granted on
// r's monotonic clock, for a Limiter written outside this package. A cost
// outside [0, 2^31) is the Limiter's to refuse before it calls NewLease.
func NewLease(r Releaser, cost int, granted time.Duration) Lease {
	rec := leaseRecords.Get().(*leaseRecord)
	rec.releaser = r
	return Lease{record: rec, gen: rec.gen.Load(), granted: granted, spec: leaseSpec{cost: int32(cost)}}
}

// Release frees what the lease holds and reports its outcome to the limiter
// that granted it. Only the first Release of the lease or any copy of it
// does anything.
func (l *Lease) Release() {
	r := l.record
	if r == nil {
		return
	}
	l.record = nil
	switch {
	case r.spent != nil:
		if l.spec.outcome() == adaptive.Throttled {
			r.spent.Throttled()
		}
		return
	case r.slots != nil:
		if r.slots.Give(l.gen) && (r.waiting.Load() > 0 || l.spec.outcome() == adaptive.Throttled) {
			r.owner.release(*l)
		}
		return
	}
	if !r.gen.CompareAndSwap(l.gen, l.gen+1) {
		return
	}
	owner, releaser := r.owner, r.releaser
	r.owner, r.releaser = nil, nil
	leaseRecords.Put(r)
	if owner != nil {
		owner.release(*l)
	} else {
		releaser.ReleaseLease(*l)
	}
}

// Report tells the limiter how the call went, for the limiters that learn
// (see adaptive.Outcome): the adaptive concurrency limit samples latency
// from a Success and reads Dropped (a timeout, a 503) and Throttled as
// queueing; the adaptive rate limiter cuts on Throttled and may climb on a
// Success; Ignored teaches both nothing. A lease that reports nothing is a
// Success; the last report before Release counts. With Throttled,
// retryAfter is the dependency's Retry-After hint (0 when it gave none),
// kept in whole milliseconds, rounded up, and at most about 12.4 days;
// with any other outcome it is not kept.
func (l *Lease) Report(o adaptive.Outcome, retryAfter time.Duration) {
	if o != adaptive.Throttled {
		retryAfter = 0
	}
	ms := (min(max(retryAfter, 0), maxRetryAfter) + time.Millisecond - 1) / time.Millisecond
	l.spec.report = uint32(ms)<<outcomeBits | uint32(o)&outcomeMask
}

// Outcome is what Report last said: adaptive.Success unless told
// otherwise.
func (l *Lease) Outcome() adaptive.Outcome { return l.spec.outcome() }

// RetryAfter is the hint reported with Throttled.
func (l *Lease) RetryAfter() time.Duration { return l.spec.retryAfter() }

// Cost is the number of permits (units) the lease holds.
func (l *Lease) Cost() int { return int(l.spec.cost) }

// Granted is when the lease was granted, as an offset on the granting
// limiter's monotonic clock; leases of one limiter compare by it.
func (l *Lease) Granted() time.Duration { return l.granted }

// Held reports whether the lease is still held: granted, and released by
// neither it nor any copy of it (for PerSecond and PerWindow, whose permits
// are spent when granted, not released by this copy). A grant of cost 0
// holds nothing.
func (l *Lease) Held() bool {
	r := l.record
	switch {
	case r == nil:
		return false
	case r.spent != nil:
		return true
	case r.slots != nil:
		return r.slots.Holds(l.gen)
	}
	return r.gen.Load() == l.gen
}
