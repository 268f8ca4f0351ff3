package fairshare

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// waiter is one waiter of the model queue the tests drive the Order with.
type waiter struct {
	id, level, cost int
	tag             Tag
	ahead           int         // units of its own level queued ahead of it when it joined
	passed          [Levels]int // units of each level that joined later and were served first
}

// queue is the model: waiters in the order Order gives, as limit's queue
// keeps them.
type queue struct {
	o       Order
	waiters []*waiter
	nextID  int
	gone    [Levels]int // units of each level that left unserved since the level was last empty
}

func (q *queue) join(level, cost int) *waiter {
	w := &waiter{id: q.nextID, level: level, cost: cost, tag: q.o.Join(level, cost)}
	q.nextID++
	w.ahead = q.gone[level]
	for _, a := range q.waiters {
		if a.level == level {
			w.ahead += a.cost
		}
	}
	i := len(q.waiters)
	for i > 0 && !q.waiters[i-1].tag.Ahead(w.tag) {
		i--
	}
	q.waiters = slices.Insert(q.waiters, i, w)
	return w
}

// serve serves the front, counting it as passing every waiter that joined
// before it and is still queued.
func (q *queue) serve() *waiter {
	f := q.waiters[0]
	q.waiters = q.waiters[1:]
	for _, w := range q.waiters {
		if w.id < f.id {
			w.passed[f.level] += f.cost
		}
	}
	q.o.Leave(f.level, f.tag, true)
	q.emptied(f.level)
	return f
}

func (q *queue) emptied(level int) {
	for _, w := range q.waiters {
		if w.level == level {
			return
		}
	}
	q.gone[level] = 0
}

func (q *queue) cancel(i int) {
	w := q.waiters[i]
	q.waiters = slices.Delete(q.waiters, i, i+1)
	q.o.Leave(w.level, w.tag, false)
	q.gone[w.level] += w.cost
	q.emptied(w.level)
}

func TestOneLevelIsFIFO(t *testing.T) {
	for level := range Levels {
		var q queue
		for i := range 50 {
			q.join(level, 1+i%3)
		}
		for i := range 50 {
			if w := q.serve(); w.id != i {
				t.Fatalf("level %d: served %d as the %dth; want first come first served", level, w.id, i)
			}
		}
	}
}

func TestHigherLevelPassesALowerQueue(t *testing.T) {
	var q queue
	for range 100 {
		q.join(0, 1)
	}
	c := q.join(2, 1)
	if q.waiters[0] != c {
		t.Fatalf("a critical waiter behind 100 background ones is at place %d; want the front", slices.Index(q.waiters, c))
	}
	d := q.join(1, 1)
	if q.waiters[1] != d {
		t.Fatalf("a default waiter is at place %d; want right behind the critical one", slices.Index(q.waiters, d))
	}
}

// TestPropertyWithinLevelFIFOAndStarvationBound drives random queues of
// three levels — joins, services and cancellations — and checks that every
// level is served first come first served and that no waiter is passed by
// more of a higher level than Bound allows.
func TestPropertyWithinLevelFIFOAndStarvationBound(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var q queue
		lastServed := [Levels]int{-1, -1, -1}
		weights := [Levels]int{1 + rng.IntN(8), 1 + rng.IntN(8), 1 + rng.IntN(8)}
		for step := range 3000 {
			switch r := rng.IntN(100); {
			case r < 50 || len(q.waiters) == 0:
				level := pick(rng, weights)
				q.join(level, 1+rng.IntN(4))
			case r < 92:
				f := q.serve()
				if f.id < lastServed[f.level] {
					t.Fatalf("seed %d step %d: level %d served %d after %d", seed, step, f.level, f.id, lastServed[f.level])
				}
				lastServed[f.level] = f.id
				for above := f.level + 1; above < Levels; above++ {
					if got, bound := f.passed[above], Bound(f.level, above, f.ahead, f.cost); got > bound {
						t.Fatalf("seed %d step %d: a level-%d waiter of cost %d with %d units of its level ahead was passed by %d units of level %d; the bound is %d",
							seed, step, f.level, f.cost, f.ahead, got, above, bound)
					}
				}
			default:
				q.cancel(rng.IntN(len(q.waiters)))
			}
		}
	}
}

func pick(rng *rand.Rand, weights [Levels]int) int {
	n := rng.IntN(weights[0] + weights[1] + weights[2])
	for level, w := range weights {
		if n < w {
			return level
		}
		n -= w
	}
	return Levels - 1
}

// TestEveryWaitingLevelGetsItsShare checks the share while all three
// levels stay backlogged: 16 : 4 : 1 units.
func TestEveryWaitingLevelGetsItsShare(t *testing.T) {
	var q queue
	for range 200 {
		for level := range Levels {
			q.join(level, 1)
		}
	}
	var served [Levels]int
	for range 210 {
		f := q.serve()
		served[f.level]++
		q.join(f.level, 1) // the level stays backlogged
	}
	if want := [Levels]int{10, 40, 160}; served != want {
		t.Fatalf("served %v of 210 by level (background, default, critical); want %v", served, want)
	}
}

func TestWaitingCountsEachLevel(t *testing.T) {
	var o Order
	first := o.Join(0, 1)
	o.Join(2, 3)
	o.Join(0, 2)
	if got := [Levels]int{o.Waiting(0), o.Waiting(1), o.Waiting(2)}; got != [Levels]int{2, 0, 1} {
		t.Errorf("waiting by level %v, want [2 0 1]", got)
	}
	o.Leave(0, first, true)
	if got := o.Waiting(0); got != 1 {
		t.Errorf("background waiting %d after one left, want 1", got)
	}
}
