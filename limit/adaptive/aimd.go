package adaptive

import (
	"time"

	"github.com/headroom-go/headroom"
)

// The AIMD defaults: a cut keeps 70% of the rate (RFC 8312's β, which the
// AWS SDK's adaptive mode uses too), and a rise adds a fixed step every
// interval while requests wait.
const (
	defaultAIMDDecreaseFactor   = 0.7              // rate × 0.7 on a cut
	defaultAIMDIncreaseStep     = 120.0            // units per minute, whole budget
	defaultAIMDIncreaseInterval = 10 * time.Second // at most one step per interval
)

// AIMD is additive increase, multiplicative decrease: the default
// controller. On a cut the rate is multiplied by DecreaseFactor; on a
// success, once IncreaseInterval has passed since the last change and
// requests had to wait in it, the rate goes up by IncreaseStep divided by
// the instance count. With the defaults the whole budget climbs by at most
// 720 units per minute each minute: a saw tooth that spends most of its
// time below the limit.
//
// The zero value uses the defaults; each zero field means its default.
type AIMD struct {
	// DecreaseFactor multiplies the rate on a cut; in (0, 1). 0 means 0.7.
	DecreaseFactor float64 `json:"decreaseFactor,omitempty"`
	// IncreaseStep is the step, in units per minute for the whole budget.
	// 0 means 120.
	IncreaseStep float64 `json:"increaseStep,omitempty"`
	// IncreaseInterval is the least time between two steps. 0 means 10 s.
	IncreaseInterval headroom.Duration `json:"increaseInterval,omitempty"`
}

// OnThrottled returns Rate × DecreaseFactor.
func (a AIMD) OnThrottled(s RateState) float64 {
	f := a.DecreaseFactor
	if f == 0 {
		f = defaultAIMDDecreaseFactor
	}
	return s.Rate * f
}

// OnSuccess adds IncreaseStep / InstanceCount when requests waited and
// IncreaseInterval has passed since the last change.
func (a AIMD) OnSuccess(s RateState) (float64, bool) {
	iv := time.Duration(a.IncreaseInterval)
	if iv == 0 {
		iv = defaultAIMDIncreaseInterval
	}
	if !s.Waited || s.SinceLastIncrease < iv {
		return 0, false
	}
	step := a.IncreaseStep
	if step == 0 {
		step = defaultAIMDIncreaseStep
	}
	return min(s.Rate+step/float64(max(s.InstanceCount, 1)), s.MaxRate), true
}
