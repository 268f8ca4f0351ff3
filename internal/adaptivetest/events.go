package adaptivetest

import "time"

// event is an arrival or a completion at model time at.
type event struct {
	at   time.Duration
	kind int // arrival or done
	call *call
}

const (
	arrival = iota
	done
)

// Before orders events by time; at a tie a completion comes first, so that
// the worker it frees serves the arrival.
func (e event) Before(o event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.kind > o.kind
}

// call is one admitted call, from its arrival to its completion.
type call struct {
	sent    time.Duration
	service time.Duration
	token   any
	phase   int
}
