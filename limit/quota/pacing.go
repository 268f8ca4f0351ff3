package quota

import "time"

// pacingGrace is how long after a throttle a pacer that has slowed down on
// it is given before throttles of attempts sent later count against the
// key: long enough for a cut rate to reach the server and a sliding window
// of a second to free units. A pacer that cannot help (a window spent)
// sends at its rate meanwhile, each attempt a throttle; a shorter grace
// cost more than it saved against sliding logs of a second.
const pacingGrace = int64(time.Second)

// pacingFailed notes a throttle, at n, of a paced attempt sent at sent, and
// reports whether it shows the pacing failing: the throttles have gone on,
// with no success between, for an attempt sent pacingGrace after the first
// of them. e.mu is held.
func (e *entry) pacingFailed(sent, n int64) bool {
	if e.throttledSince == 0 {
		e.throttledSince = n
		return false
	}
	return sent > e.throttledSince+pacingGrace || sent == 0 && n > e.throttledSince+pacingGrace
}
