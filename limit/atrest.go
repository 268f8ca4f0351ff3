package limit

import "time"

// AtRest reports whether l holds nothing that a fresh limiter of its options
// would not: a PerSecond bucket full again, a PerWindow window with no
// grant in it, a Concurrency bulkhead with no permit out, and nobody
// waiting. A holder of many limiters, one per host say, may drop one at
// rest and build it again later without admitting anything the dropped one
// would have refused. Limiters that learn (Adaptive, AdaptiveRate) are never
// at rest: what they learned is state a fresh one lacks. Nor is a limiter
// of another package, which cannot say.
func AtRest(l Limiter) bool {
	r, ok := l.(interface{ atRest() bool })
	return ok && r.atRest()
}

func (l *perSecond) atRest() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queue.empty() && l.bucket.Available(time.Since(l.epoch)) == l.bucket.Burst()
}

func (l *perWindow) atRest() bool {
	return l.waiting.Load() == 0 && l.engine.Available(time.Since(l.epoch)) == l.engine.Permits()
}

func (l *bulkhead) atRest() bool {
	return l.waiting.Load() == 0 && l.engine.InFlight() == 0
}
