package concurrency

import (
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// MaxLimit is the largest limit a Bulkhead takes: it keeps a slot of 8
// bytes per permit.
const MaxLimit = 1 << 16

// Bits of a slot's word: held, held anonymously (by TryAcquire, not Take),
// and above them the slot's generation, which every release moves on.
const (
	heldBit  = 1
	anonBit  = 2
	genShift = 2
	genMask  = 1<<48 - 1 // a ticket keeps 48 bits of the generation and 16 of the slot
)

// A Bulkhead lets at most Limit permits be held at once. Each permit is a
// slot, and taking or giving back a permit is one compare-and-swap on its
// slot's word; nothing else is shared.
//
// A permit taken with Take is named by a ticket, the slot and its
// generation, and only Give of that ticket frees it: the first Give frees
// the slot and moves its generation on, so a copy of the ticket given later
// frees nothing, even once the slot serves another holder. Permits taken
// with TryAcquire are anonymous: Release gives back any of them.
//
// It is safe for concurrent use, and reads no clock.
type Bulkhead struct {
	// hint is where the next search for a free slot starts: a slot freed
	// lately, which the next taker then finds at once. A taker that finds
	// it held searches from a random slot instead.
	hint  atomic.Uint32
	slots []atomic.Uint64
}

// New returns a bulkhead that lets limit permits be held at once, or a
// *headroom.ConfigError for a limit below 0 or above MaxLimit. 0 refuses
// every permit.
func New(limit int) (*Bulkhead, error) {
	if limit < 0 || limit > MaxLimit {
		l := problems.New("concurrency")
		l.Add("limit", limit, "0 to "+strconv.Itoa(MaxLimit)+" permits")
		return nil, l.Err()
	}
	return &Bulkhead{slots: make([]atomic.Uint64, limit)}, nil
}

// Take takes one permit, and reports it by its ticket: the one thing that
// gives it back (Give). It takes now as every engine does, and needs it
// not: ok is false when every permit is held, and when a holder releases is
// not the bulkhead's to know.
func (b *Bulkhead) Take(now time.Duration) (ticket uint64, ok bool) {
	n := uint32(len(b.slots))
	if n == 0 {
		return 0, false
	}
	i := b.hint.Load()
	if i < n {
		s := &b.slots[i]
		if w := s.Load(); w&heldBit == 0 && s.CompareAndSwap(w, w|heldBit) {
			return (w>>genShift)<<16 | uint64(i), true
		}
	}
	// The hint's slot is held, by another taker as like as not: search
	// from a random slot, so that takers who met there part.
	i = rand.Uint32N(n)
	for range n {
		s := &b.slots[i]
		if w := s.Load(); w&heldBit == 0 && s.CompareAndSwap(w, w|heldBit) {
			return (w>>genShift)<<16 | uint64(i), true
		}
		if i++; i == n {
			i = 0
		}
	}
	return 0, false
}

// Give gives back the permit of ticket, and reports whether it did: only
// the first Give of a ticket, or of any copy of it, frees the permit.
func (b *Bulkhead) Give(ticket uint64) bool {
	i, gen := ticket&0xffff, ticket>>16
	if i >= uint64(len(b.slots)) {
		return false
	}
	if !b.slots[i].CompareAndSwap(gen<<genShift|heldBit, (gen+1)&genMask<<genShift) {
		return false
	}
	b.point(uint32(i))
	return true
}

// point makes slot i, just freed, where the next search starts, unless the
// hint's own slot is free: a caller that takes and gives back in turn keeps
// its slot, and callers on other cores do not pull the hint to and fro (a
// store is a locked instruction on some machines, and the hint's cache line
// would bounce between the cores).
func (b *Bulkhead) point(i uint32) {
	if h := b.hint.Load(); h != i && b.slots[h].Load()&heldBit != 0 {
		b.hint.Store(i)
	}
}

// Holds reports whether ticket's permit is still held: taken, and given
// back by no copy of the ticket.
func (b *Bulkhead) Holds(ticket uint64) bool {
	i, gen := ticket&0xffff, ticket>>16
	return i < uint64(len(b.slots)) && b.slots[i].Load() == gen<<genShift|heldBit
}

// TryAcquire takes cost anonymous permits when that many are free, and
// reports whether it did; Release gives them back. A cost of 0 always
// succeeds and takes nothing; a negative cost, or one above the limit,
// never does. Like Take it needs not now, and a refusal's retryAfter is 0.
func (b *Bulkhead) TryAcquire(now time.Duration, cost int) (ok bool, retryAfter time.Duration) {
	if cost < 0 || cost > len(b.slots) {
		return false, 0
	}
	for taken := 0; taken < cost; taken++ {
		if !b.takeAnon() {
			b.Release(taken) // not all free: give back the share taken
			return false, 0
		}
	}
	return true, 0
}

// takeAnon takes one free slot anonymously.
func (b *Bulkhead) takeAnon() bool {
	for i := range b.slots {
		s := &b.slots[i]
		if w := s.Load(); w&heldBit == 0 && s.CompareAndSwap(w, w|heldBit|anonBit) {
			return true
		}
	}
	return false
}

// Release gives back cost anonymous permits, taken by TryAcquire. It
// never frees a permit taken with Take, and stops when no anonymous permit
// is held.
func (b *Bulkhead) Release(cost int) {
	for i := 0; cost > 0 && i < len(b.slots); i++ {
		s := &b.slots[i]
		if w := s.Load(); w&anonBit != 0 && s.CompareAndSwap(w, (w>>genShift+1)&genMask<<genShift) {
			b.point(uint32(i))
			cost--
		}
	}
}

// Limit is how many permits may be held at once.
func (b *Bulkhead) Limit() int { return len(b.slots) }

// InFlight is how many permits are held now. It reads every slot: it is
// for telemetry and tests, not for a fast path.
func (b *Bulkhead) InFlight() int {
	n := 0
	for i := range b.slots {
		n += int(b.slots[i].Load() & heldBit)
	}
	return n
}

// Granted is how many permits the bulkhead has granted, those given back
// and those held. It reads every slot: it is for telemetry, not for a fast
// path. It wraps at 2^48 grants of one slot.
func (b *Bulkhead) Granted() int64 {
	var n int64
	for i := range b.slots {
		w := b.slots[i].Load()
		n += int64(w>>genShift) + int64(w&heldBit)
	}
	return n
}
