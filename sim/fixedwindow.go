package sim

import "time"

// fixedWindow counts the units accepted in the current window and gives
// them all back when it ends. A window is [start, start+window): with
// Server.Aligned it is the multiple of the window that holds now
// (envoyproxy/ratelimit); otherwise it starts with the first request after
// the last window ended, refused or not (express-rate-limit's MemoryStore
// and ulule/limiter create the window on any hit). It never accepts more
// than the quota in force within one window. Its reset and a refused
// request's fit are the window's end. (express-rate-limit and ulule/limiter
// also count refused hits; with the window already full that changes
// nothing for requests of one unit, and the model counts only what it
// accepts, as for every kind.)
type fixedWindow struct {
	window  time.Duration
	aligned bool
	quota   int
	open    bool          // a window has started
	start   time.Duration // the current window's start
	count   int           // units accepted in it
}

func newFixedWindow(s Server, q int) *fixedWindow {
	return &fixedWindow{window: s.Window, aligned: s.Aligned, quota: q}
}

func (f *fixedWindow) setQuota(_ time.Duration, units int) { f.quota = units }

// roll starts a new window when the current one has ended by now (or none
// has started); a first-request window starts only for a request.
func (f *fixedWindow) roll(now time.Duration, request bool) {
	if f.open && now < f.start+f.window {
		return
	}
	switch {
	case f.aligned:
		f.open, f.start, f.count = true, now-now%f.window, 0
	case request:
		f.open, f.start, f.count = true, now, 0
	default:
		f.open, f.count = false, 0
	}
}

func (f *fixedWindow) used(now time.Duration) int {
	f.roll(now, false)
	return f.count
}

func (f *fixedWindow) decide(now time.Duration, units int) decision {
	f.roll(now, true)
	d := decision{resetAt: f.start + f.window}
	if f.count+units <= f.quota {
		f.count += units
		d.ok = true
	} else {
		d.fitsAt, d.never = d.resetAt, units > f.quota
	}
	d.remaining = max(f.quota-f.count, 0)
	return d
}
