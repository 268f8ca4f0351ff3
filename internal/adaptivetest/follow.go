package adaptivetest

import "time"

// follow is the time from trace index a until the limit's trailing
// one-second mean enters [c(1−band), c(1+band)] and stays there for hold
// samples (or until index b); -1 if it never does. The mean, because an
// AIMD limit saws by design.
func follow(trace []int, a, b int, c, band float64, hold int, every time.Duration) time.Duration {
	lo, hi := c*(1-band), c*(1+band)
	w := max(int(time.Second/every), 1)
	in := func(i int) bool {
		var s float64
		n := 0
		for j := max(i-w+1, 0); j <= i; j++ {
			s += float64(trace[j])
			n++
		}
		m := s / float64(n)
		return m >= lo && m <= hi
	}
	for i := a; i < b; i++ {
		ok := true
		for j := i; j < min(i+hold, b); j++ {
			if !in(j) {
				ok = false
				break
			}
		}
		if ok {
			return time.Duration(i-a) * every
		}
	}
	return -1
}
