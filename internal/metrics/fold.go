package metrics

import (
	"reflect"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// folds holds the shared Limiters of the hosts past a client's host series
// bound (see HostSeries), per meter provider and attribute set: every
// per-host limiter whose attributes fold records into one, so that any
// number of hosts makes one series of each count.
var folds struct {
	sync.Mutex
	m map[liveKey]*Limiter
}

// fold is what a folded Limiter shares with the other limiters of its
// series. Only counts and waits add up across hosts: the folded series
// reports no limit, queue or figure, since a sum of limits means nothing.
type fold struct {
	key  liveKey
	refs int // under folds' lock

	mu      sync.Mutex
	granted map[*Limiter]func() int64 // engines' grant counts of the live handles
	retired int64                     // the grants counted by handles since closed
}

// foldedLimiter returns a handle on the shared Limiter of the folded
// series kvs of kind on mp, making it with its first handle. A meter
// provider that cannot be a map key gets a series of its own per limiter.
func foldedLimiter(mp metric.MeterProvider, kind string, kvs []attribute.KeyValue) *Limiter {
	if !reflect.TypeOf(mp).Comparable() {
		return newLimiter(mp, kind, kvs, liveKey{})
	}
	set := attribute.NewSet(kvs...)
	k := liveKey{mp: mp, set: set.Equivalent()}
	folds.Lock()
	defer folds.Unlock()
	if folds.m == nil {
		folds.m = make(map[liveKey]*Limiter)
	}
	into := folds.m[k]
	if into == nil {
		into = newLimiter(mp, kind, kvs, liveKey{})
		into.fold = &fold{key: k, granted: make(map[*Limiter]func() int64)}
		folds.m[k] = into
	}
	into.fold.refs++
	return &Limiter{into: into}
}

// leave closes h, a handle on a folded series: its engine's grants stay
// counted, and the series closes with its last handle.
func (h *Limiter) leave() {
	into := h.into
	f := into.fold
	f.mu.Lock()
	if g, ok := f.granted[h]; ok {
		f.retired += g()
		delete(f.granted, h)
	}
	f.mu.Unlock()
	folds.Lock()
	f.refs--
	last := f.refs == 0
	if last {
		delete(folds.m, f.key)
	}
	folds.Unlock()
	if last {
		into.Close()
	}
}

// foldedGrants is the grants the engines of a folded series' handles
// counted, those closed included.
func (f *fold) grants() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.retired
	for _, g := range f.granted {
		n += g()
	}
	return n
}
