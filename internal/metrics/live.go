package metrics

import (
	"reflect"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// live holds the attribute sets of the Limiters not yet closed, per meter
// provider, so that two live limiters never report as one series.
var live struct {
	sync.Mutex
	sets map[liveKey]struct{}
}

// liveKey is one live Limiter's meter provider and attribute set; the zero
// liveKey holds nothing.
type liveKey struct {
	mp  any
	set attribute.Distinct
}

// claim returns the attributes attrs(name), or attrs(name#2), attrs(name#3)
// and so on, the first whose set no live Limiter on mp holds, and holds it.
// A meter provider that cannot be a map key is not checked.
func claim(mp metric.MeterProvider, attrs func(name string) []attribute.KeyValue, name string) (liveKey, []attribute.KeyValue) {
	kvs := attrs(name)
	if !reflect.TypeOf(mp).Comparable() {
		return liveKey{}, kvs
	}
	live.Lock()
	defer live.Unlock()
	if live.sets == nil {
		live.sets = make(map[liveKey]struct{})
	}
	for i := 2; ; i++ {
		s := attribute.NewSet(kvs...)
		k := liveKey{mp: mp, set: s.Equivalent()}
		if _, taken := live.sets[k]; !taken {
			live.sets[k] = struct{}{}
			return k, kvs
		}
		kvs = attrs(name + "#" + strconv.Itoa(i))
	}
}

// release lets another Limiter use k's attributes.
func (k liveKey) release() {
	if k.mp == nil {
		return
	}
	live.Lock()
	delete(live.sets, k)
	live.Unlock()
}
