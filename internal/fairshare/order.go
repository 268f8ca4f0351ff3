// Package fairshare orders the waiters of a queue by priority level, first
// come first served within a level, with a share for every level that waits:
// stride scheduling (Waldspurger and Weihl, "Stride Scheduling:
// Deterministic Proportional-Share Resource Management", MIT/LCS/TM-528,
// 1995) on a virtual clock, as weighted fair queueing tags its packets.
//
// A waiter of cost c at a level with stride s is tagged when it joins:
//
//	start  = max(V, the finish of the last waiter of its level)
//	finish = start + s·c
//
// where V, the virtual time, is the largest finish of any waiter served
// since the queue was last empty. Waiters are served in order of finish,
// a tie going to the one that joined first. Within a level finishes rise,
// so a level is served first come first served; a queue holding one level
// only (every caller without a priority) is the plain FIFO it always was.
//
// The strides are 1 (critical), 4 (default) and 16 (background): while
// every level has waiters, they are served 16 : 4 : 1 in units. A waiter
// that is alone on its level is tagged from V, so it goes ahead of every
// lower waiter whose finish is later than its own: a critical request that
// finds a queue of background work waits behind at most 1/16 of its units.
//
// The bound on starvation follows from the tags. Waiters that join later
// than a waiter X and are served before it have finishes at most X's
// finish F and starts at least V₀, the virtual time when X joined; those
// of one level with stride s′ hold disjoint stretches of s′ per unit (a
// level's next waiter starts at its latest's finish, or at V, which has
// passed the finish of every one served), so at most (F−V₀)/s′ units of
// that level pass X. For a waiter
// of stride s and cost c, F−V₀ ≤ s·(u+c), where u is the units of its own
// level ahead of it when it joined, counting those of its level that left
// unserved before it came while the level kept waiters (their stretch of
// the clock is not given back). It is passed by at most (s/s′)·(u+c) units
// of each higher level: 16·(u+c) critical units and 4·(u+c) default ones
// for background work. Bound computes it.
package fairshare

// Levels is the number of priority levels: 0 is the lowest (background),
// 1 the default, 2 the highest (critical).
const Levels = 3

// strides are the virtual time a unit of cost takes at each level.
var strides = [Levels]int64{16, 4, 1}

// Stride is the virtual time one unit of cost takes at level.
func Stride(level int) int64 { return strides[level] }

// A Tag places a waiter in the order. Waiters go by Finish; a newcomer
// goes behind every waiter whose Finish is at most its own.
type Tag struct{ Start, Finish int64 }

// Ahead reports whether a waiter tagged t stays ahead of a newcomer tagged
// n: ties go to the one already waiting.
func (t Tag) Ahead(n Tag) bool { return t.Finish <= n.Finish }

// Order is the virtual clock of one queue. Its zero value is an empty
// queue's. It is not safe for concurrent use: its owner's lock guards it
// with the queue.
type Order struct {
	vtime int64
	last  [Levels]int64 // finish of each level's latest waiter
	count [Levels]int   // waiters of each level
	total int
}

// Join tags a waiter of level and cost (≥ 0) that joins now.
func (o *Order) Join(level, cost int) Tag {
	start := max(o.vtime, o.last[level])
	t := Tag{Start: start, Finish: start + strides[level]*int64(max(cost, 0))}
	o.last[level] = t.Finish
	o.count[level]++
	o.total++
	return t
}

// Leave takes out a waiter of level tagged t: served (granted, its turn
// come), or gone (its context ended, or shed). Serving moves the virtual
// time to its finish. The last waiter of a level takes its finish with it,
// so a level that comes back later is tagged from the virtual time again;
// once the queue is empty the clock starts over.
func (o *Order) Leave(level int, t Tag, served bool) {
	if served {
		o.vtime = max(o.vtime, t.Finish)
	}
	o.count[level]--
	o.total--
	switch {
	case o.total <= 0:
		*o = Order{}
	case o.count[level] == 0:
		o.last[level] = 0
	case o.last[level] == t.Finish:
		// The level's latest left early (its context ended): the next of
		// the level starts where it started.
		o.last[level] = t.Start
	}
}

// Waiting is the number of waiters of level.
func (o *Order) Waiting(level int) int { return o.count[level] }

// Mixed reports whether waiters of more than one level wait: only then
// can a waiter be passed, and wait longer than the one at the front.
func (o *Order) Mixed() bool {
	levels := 0
	for _, n := range o.count {
		if n > 0 {
			levels++
		}
	}
	return levels > 1
}

// Bound is how many units of level above can pass a waiter of level below
// with cost and ahead units of its own level ahead of it (see the package
// doc): (stride(below)/stride(above))·(ahead+cost). 0 when above is not
// higher.
func Bound(below, above, ahead, cost int) int {
	if above <= below {
		return 0
	}
	return int(strides[below] / strides[above] * int64(ahead+cost))
}
