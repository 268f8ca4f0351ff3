package quota

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// defaultMaxKeys is how many keys have state at once unless
// Options.MaxKeys says otherwise: as many as an HTTP client keeps per-host
// limiters for (httpx.WithMaxHosts' default).
const defaultMaxKeys = 1024

// keys is the guard's map of keys to their state, bounded: when a new key
// comes and MaxKeys have state, the least recently used keys that may go
// are dropped, an eighth of the bound at a time, so that a stream of new
// keys costs a sort of the map only once every MaxKeys/8 of them. A key may
// go when nothing holds on to it: no attempt in flight, none held waiting,
// and no Retry-After or backoff still blocking it, which the server asked
// for and a fresh state would forget. What a key learned otherwise lasts as
// long as the key is in use. Lookups are lock-free; only adding a key to a
// full map takes a lock.
type keys struct {
	m   sync.Map // string → *entry
	n   atomic.Int64
	max int
	// clock orders the keys by their last use: it ticks when a key other
	// than the one that last ticked it is used, so the attempts of one busy
	// key read it without writing it.
	clock atomic.Uint64
	mu    sync.Mutex // one eviction at a time
}

// load returns key's entry, marking it used: an attempt or a response.
func (k *keys) load(key string) (*entry, bool) {
	e, ok := k.peek(key)
	if ok && e.used.Load() != k.clock.Load() {
		e.used.Store(k.clock.Add(1))
	}
	return e, ok
}

// peek returns key's entry without marking it used: a reading of its state.
func (k *keys) peek(key string) (*entry, bool) {
	v, ok := k.m.Load(key)
	if !ok {
		return nil, false
	}
	return v.(*entry), true
}

// store returns key's entry, storing e for it when it has none, first
// making room when the map is full; n is the time, in Unix nanoseconds.
func (k *keys) store(key string, e *entry, n int64) *entry {
	if k.n.Load() >= int64(k.max) {
		k.evict(n)
	}
	e.used.Store(k.clock.Add(1))
	v, loaded := k.m.LoadOrStore(key, e)
	if !loaded {
		k.n.Add(1)
	}
	return v.(*entry)
}

// evict drops the least recently used keys that may go until the map
// holds at most seven eighths of its bound; keys that may not go stay, past
// the bound if need be.
func (k *keys) evict(n int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	over := int(k.n.Load()) - k.max + max(k.max/8, 1)
	if over <= 0 {
		return
	}
	type spare struct {
		key  string
		e    *entry
		used uint64
	}
	var spares []spare
	k.m.Range(func(key, v any) bool {
		if e := v.(*entry); e.mayGo(n) {
			spares = append(spares, spare{key.(string), e, e.used.Load()})
		}
		return true
	})
	slices.SortFunc(spares, func(a, b spare) int { return cmp.Compare(a.used, b.used) })
	for _, s := range spares[:min(over, len(spares))] {
		k.delete(s.key, s.e)
	}
}

// delete drops key when its entry is still e.
func (k *keys) delete(key string, e *entry) {
	if k.m.CompareAndDelete(key, e) {
		k.n.Add(-1)
	}
}

// each calls f for every key and its entry.
func (k *keys) each(f func(key string, e *entry) bool) {
	k.m.Range(func(key, v any) bool { return f(key.(string), v.(*entry)) })
}

// mayGo reports whether e's key may be dropped at n: nothing in flight or
// held waiting for it, and no block ahead.
func (e *entry) mayGo(n int64) bool {
	if len(e.sem) > 0 || e.waiting.Load() > 0 {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.blocked <= n
}
