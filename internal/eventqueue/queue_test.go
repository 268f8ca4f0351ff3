package eventqueue

import (
	"container/heap"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tied orders by at alone, so that many events tie; id tells them apart
// in the output.
type tied struct{ at, id int }

func (e tied) Before(o tied) bool { return e.at < o.at }

// reference is a container/heap of the same events, ordered alike.
type reference []tied

func (r reference) Len() int           { return len(r) }
func (r reference) Less(i, j int) bool { return r[i].Before(r[j]) }
func (r reference) Swap(i, j int)      { r[i], r[j] = r[j], r[i] }
func (r *reference) Push(x any)        { *r = append(*r, x.(tied)) }
func (r *reference) Pop() any {
	old := *r
	e := old[len(old)-1]
	*r = old[:len(old)-1]
	return e
}

// The simulations' outputs depend on the order of tied events: a queue
// that broke ties otherwise than container/heap would change their
// figures. Pushes and pops interleaved at random, with few distinct times,
// must come out in container/heap's order.
func TestTiesComeOutAsFromContainerHeap(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var q Queue[tied]
		var ref reference
		var got, want []tied
		for id := range 2000 {
			if rng.IntN(3) > 0 || q.Len() == 0 {
				e := tied{at: rng.IntN(8), id: id}
				q.Push(e)
				heap.Push(&ref, e)
				continue
			}
			e, _ := q.Pop()
			got = append(got, e)
			want = append(want, heap.Pop(&ref).(tied))
		}
		for q.Len() > 0 {
			e, _ := q.Pop()
			got = append(got, e)
			want = append(want, heap.Pop(&ref).(tied))
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(tied{})); diff != "" {
			t.Fatalf("seed %d: order differs from container/heap (-want +got):\n%s", seed, diff)
		}
	}
}

func TestPopEmpty(t *testing.T) {
	var q Queue[tied]
	if e, ok := q.Pop(); ok || e != (tied{}) {
		t.Fatalf("Pop on an empty queue = %v, %v; want the zero event, false", e, ok)
	}
	q.Push(tied{at: 1})
	q.Pop()
	if _, ok := q.Pop(); ok || q.Len() != 0 {
		t.Fatalf("Pop after the last event: ok %v, Len %d; want false, 0", ok, q.Len())
	}
}

// pointing holds a pointer, so that a popped slot left holding it would
// keep its target alive.
type pointing struct {
	at int
	p  *int
}

func (e pointing) Before(o pointing) bool { return e.at < o.at }

func TestPopDropsTheVacatedSlot(t *testing.T) {
	var q Queue[pointing]
	for i := range 3 {
		q.Push(pointing{at: i, p: new(int)})
	}
	q.Pop()
	if tail := q.events[:cap(q.events)][q.Len()]; tail.p != nil {
		t.Errorf("the slot Pop vacated still points to %p", tail.p)
	}
}

// The simulator's hot loop pushes and pops every event: once the queue has
// its working size, neither allocates.
func TestPushPopAllocateNothing(t *testing.T) {
	var q Queue[tied]
	for i := range 64 {
		q.Push(tied{at: i})
	}
	allocs := testing.AllocsPerRun(1000, func() {
		e, _ := q.Pop()
		e.at += 64
		q.Push(e)
	})
	if allocs != 0 {
		t.Errorf("Pop then Push: %v allocations, want 0", allocs)
	}
}

func BenchmarkPushPop(b *testing.B) {
	var q Queue[tied]
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1024 {
		q.Push(tied{at: rng.IntN(1 << 20), id: i})
	}
	b.ReportAllocs()
	for b.Loop() {
		e, _ := q.Pop()
		e.at += rng.IntN(1 << 20)
		q.Push(e)
	}
}
