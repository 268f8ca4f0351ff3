package quota

import (
	"testing"
	"time"
)

// A fixed window of 10 s behind bare draft-03 fields: the first figures of
// each window (from 80% of its limit used) say a reset up to a second
// later than its end, and later ones, as the reset falls a whole second
// at a time, bound the end to within the spacing of the attempts. The
// guard holds a spent window until that bound, less a leg, not until the
// first figure's reset: over 40 s it has at least 97% of the limit
// accepted, where holding to the rounded reset idles up to a second of
// each ten.
func TestFixedWindowResetBoundedByItsFigures(t *testing.T) {
	g := newGuard(t, Options{})
	s := &fixedWindow{window: 10 * time.Second, limit: 10 * draft3Limit}
	accepted, refused := draft3Run(t, g, "w", s, 10*draft3Limit, 60, 0, 60*time.Second, 20*time.Second)
	if want := 40 * draft3Limit * 97 / 100; accepted < want || refused > accepted/100 {
		t.Errorf("%d accepted, %d refused in 40 s: want at least %d, at most 1%% refused", accepted, refused, want)
	}
}
