package bench

import (
	"testing"

	"github.com/headroom-go/headroom/internal/calib"
)

// Calibration, measured in the same run as the comparisons (package calib).

func BenchmarkCalibTimeNow(b *testing.B)   { calib.TimeNow(b) }
func BenchmarkCalibTimeSince(b *testing.B) { calib.TimeSince(b) }
func BenchmarkCalibCAS(b *testing.B)       { calib.CAS(b) }
