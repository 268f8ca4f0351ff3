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

// call is one admitted call, from its arrival to its completion.
type call struct {
	sent    time.Duration
	service time.Duration
	token   any
	phase   int
}

// events is a container/heap of events, earliest first.
type events []event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].kind > h[j].kind // completions first at a tie, so a freed worker serves the arrival
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(event)) }
func (h *events) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
