package acceptance

import (
	"math"
	"slices"
	"time"
)

// percentile is the nearest-rank p-th percentile (0 < p ≤ 1) of ds: the
// smallest value with at least p of the values at or below it. It is 0 for
// no values. ds is sorted in place.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 || p <= 0 {
		return 0
	}
	slices.Sort(ds)
	if p >= 1 {
		return ds[len(ds)-1]
	}
	// rank = ceil(p·n), less a hair so that 0.95 × 20, which floats make
	// 19.000000000000004, is rank 19 and not 20.
	rank := max(int(math.Ceil(p*float64(len(ds))-1e-9)), 1)
	return ds[rank-1]
}

// ratio is part / whole, 0 when whole is 0 (no attempts: nothing was
// throttled; no allowance: nothing to share).
func ratio(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return part / whole
}
