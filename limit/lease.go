package limit

import (
	"strconv"
	"time"
)

// Outcome is what a call taught the limiter, reported on its Lease before
// Release. Only the limiters that learn read it: the adaptive concurrency
// limit samples latency from Success and reads Dropped and Throttled as
// queueing; the adaptive rate limiter cuts on Throttled and may climb on
// Success. Ignored teaches both nothing.
type Outcome uint8

const (
	// Success is the default: the call reached the dependency and was not
	// throttled.
	Success Outcome = iota
	// Throttled means the dependency said "too many" (a 429, or a 503 with
	// Retry-After); Lease.RetryAfter carries its hint, if any.
	Throttled
	// Dropped means the call timed out or was shed downstream: a queueing
	// signal for the adaptive concurrency limit.
	Dropped
	// Ignored means the call says nothing about the dependency's capacity
	// (a network error, a 500): no limiter learns from it.
	Ignored
)

var outcomeNames = [...]string{"success", "throttled", "dropped", "ignored"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// leaseOwner is the limiter a Lease came from. release is called at most once
// per Lease, with the lease as the caller left it (cost, grant time, outcome).
// It takes the lease by value: a pointer passed through an interface method
// escapes, and would move every caller's Lease to the heap.
type leaseOwner interface {
	release(l Lease)
}

// ownerRef boxes a limiter's leaseOwner behind one pointer. With it a Lease
// is four words in four fields, which the compiler keeps in registers; with
// the interface inline it would be copied through memory on every Acquire.
// Each limiter that frees something on release holds one, pointing at
// itself.
type ownerRef struct{ leaseOwner }

// leaseSpec is the part of a Lease that the caller's report changes.
type leaseSpec struct {
	cost    int32
	outcome Outcome
}

// A Lease is the permit a Limiter granted. It is a small value: keep it in a
// variable and call Release when the call it guarded has ended, however it
// ended. A second Release frees nothing, and the zero Lease is safe to
// release.
//
// The lease is the measurement: before Release, report what
// the call taught the limiter with Throttle, Drop or Ignore; a lease released
// without a report counts as a Success.
type Lease struct {
	owner      *ownerRef
	granted    time.Duration // on the owner's monotonic axis
	retryAfter time.Duration
	spec       leaseSpec
}

// Release frees what the lease holds and reports its outcome to the limiter
// that granted it. Later calls do nothing.
func (l *Lease) Release() {
	if o := l.owner; o != nil {
		l.owner = nil
		o.release(*l)
	}
}

// Throttle reports that the dependency throttled the call, with its
// Retry-After hint (0 when it gave none).
func (l *Lease) Throttle(retryAfter time.Duration) {
	l.spec.outcome, l.retryAfter = Throttled, max(retryAfter, 0)
}

// Drop reports that the call timed out or was shed downstream.
func (l *Lease) Drop() { l.spec.outcome = Dropped }

// Ignore reports that the call says nothing about the dependency's capacity.
func (l *Lease) Ignore() { l.spec.outcome = Ignored }

// Outcome is what has been reported so far; Success unless told otherwise.
func (l *Lease) Outcome() Outcome { return l.spec.outcome }

// RetryAfter is the hint reported with Throttle.
func (l *Lease) RetryAfter() time.Duration { return l.retryAfter }

// Cost is the number of permits (units) the lease holds.
func (l *Lease) Cost() int { return int(l.spec.cost) }

// Granted is when the lease was granted, as an offset on the granting
// limiter's monotonic clock; leases of one limiter compare by it.
func (l *Lease) Granted() time.Duration { return l.granted }

// Held reports whether the lease still holds its permits.
func (l *Lease) Held() bool { return l.owner != nil }
