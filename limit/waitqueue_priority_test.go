package limit

import (
	"math/rand/v2"
	"testing"
)

// TestPropertyQueueOrder drives a waitQueue with random pushes of three
// levels, grants from the front, removals and sheds, and checks after each
// step that the links agree both ways, that queued is the sum of the costs,
// that each level is in arrival order, that a shed never takes a waiter of
// the newcomer's level or above, and that a full queue sheds only when the
// lower levels can make room.
func TestPropertyQueueOrder(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 11))
		q := &waitQueue{limit: 20}
		arrival := map[*waiter]int{}
		next := 0
		for step := range 500 {
			switch r := rng.IntN(10); {
			case r < 5:
				cost, level := 1+rng.IntN(3), rng.IntN(3)
				fits := q.shed(cost, level, func(w *waiter) {
					if w.level >= level {
						t.Fatalf("seed %d step %d: a level-%d newcomer shed a level-%d waiter", seed, step, level, w.level)
					}
					delete(arrival, w)
				})
				if !fits {
					lower := 0
					for w := q.front(); w != nil; w = w.next {
						if w.level < level {
							lower += w.cost
						}
					}
					if q.queued-lower+cost <= q.limit {
						t.Fatalf("seed %d step %d: refused a level-%d newcomer that shedding %d lower units would have fitted", seed, step, level, lower)
					}
					continue
				}
				w := q.push(cost, level)
				arrival[w] = next
				next++
			case r < 8:
				if f := q.front(); f != nil {
					q.grant(f)
					delete(arrival, f)
				}
			default:
				if len(arrival) > 0 {
					k := rng.IntN(len(arrival))
					for w := range arrival {
						if k == 0 {
							q.remove(w)
							delete(arrival, w)
							break
						}
						k--
					}
				}
			}
			sum, last := 0, [3]int{-1, -1, -1}
			var prev *waiter
			for w := q.front(); w != nil; w = w.next {
				if w.prev != prev {
					t.Fatalf("seed %d step %d: broken back link", seed, step)
				}
				if a := arrival[w]; a < last[w.level] {
					t.Fatalf("seed %d step %d: level %d out of arrival order", seed, step, w.level)
				} else {
					last[w.level] = a
				}
				sum += w.cost
				prev = w
			}
			if prev != q.tail || sum != q.queued || sum > q.limit {
				t.Fatalf("seed %d step %d: tail or count wrong: queued %d, sum %d, limit %d", seed, step, q.queued, sum, q.limit)
			}
		}
	}
}
