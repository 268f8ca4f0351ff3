package adaptive

import (
	"math"
	"time"
)

// The CUBIC constants of the AWS SDK's adaptive retry mode
// (aws/aws-sdk-go-v2 aws/retry/adaptive_ratelimit.go, newAdaptiveRateLimit;
// botocore retries/adaptive.py CubicCalculator; aws-sdk-java-v2
// RateLimitingTokenBucket), which are RFC 8312's: β_cubic SHOULD be 0.7
// (§4.5) and C SHOULD be 0.4 (§5.1).
const (
	defaultCubicBeta = 0.7 // fraction of W kept on a cut (RFC convention)
	// awsCubicScaleConstant is the AWS SDK's C, in units per second per
	// second³ for the whole budget. Set it as ScaleConstant to follow the
	// SDK's curve, whose period K = ∛(W·(1−β)/C) grows with the rate: 1.5 s
	// at 5 units a second, 9 s at 1,000.
	awsCubicScaleConstant = 0.4
	// defaultCubicPeriod is K, the time the curve takes back to W after a
	// cut, when ScaleConstant is 0: C is then W·(1−β)/K³, so that a limiter
	// probes above the rate that last met a throttle at one pace whatever
	// the rate. Each probe above a server's limit costs a throttle, and
	// against a server that answers with a Retry-After in whole seconds a
	// pause of at least a second: at AWS's constant a limiter of 5 units a
	// second would pay that every few seconds.
	defaultCubicPeriod = 20 * time.Second
	// sendRateSmoothing is the weight of the newest half-second sample of
	// the measured send rate (AWS: smooth = 0.8).
	sendRateSmoothing = 0.8
	// sendRateCap bounds a new rate by this multiple of the measured send
	// rate (AWS: 2 × measuredTxRate).
	sendRateCap = 2.0
)

// Cubic follows the window curve of RFC 8312 (§4.1 Eq. 1 and 2), in units
// per second:
//
//	K = ∛(W·(1−β)/C), rate = C·(t−K)³ + W
//
// with the AWS SDK's β, and by default a C scaled to W so that K is 20 s
// (a ScaleConstant of 0.4 gives the SDK's curve).
//
// On a cut, W is the current rate, or the measured send rate when that is
// lower (and known), and the new rate is β·W. On a success after a wait the
// rate follows the curve, where W is the rate at the last cut (the initial
// rate before the first), t the seconds since the last cut without the
// Retry-After pauses after it, and C is ScaleConstant divided by the
// instance count (so K does not depend on the count). The result is never
// above 2× the measured send rate, never below the current rate (CUBIC
// never lowers the rate on a success: it reports no change instead), and at
// most MaxRate.
//
// Unlike the AWS SDK, the rate rises only if requests had to wait, and the
// measured send rate counts units, not requests. There is no fast
// convergence, TCP-friendly region or slow start (AWS has none either).
//
// The zero value uses the defaults; each zero field means its default.
type Cubic struct {
	// Beta is the fraction of W kept on a cut; in (0, 1). 0 means 0.7.
	Beta float64 `json:"beta,omitempty"`
	// ScaleConstant is C for the whole budget, in units per second per
	// second³; 0 or above. 0 means W·(1−β)/(20 s)³: a period of 20 s at
	// any rate, so that a limiter probes above the rate that last met a
	// throttle at one pace whatever the rate. 0.4 is the AWS SDK's, whose
	// period K = ∛(W·(1−β)/C) grows with the rate: 1.5 s at 5 units a
	// second, 9 s at 1,000.
	ScaleConstant float64 `json:"scaleConstant,omitempty"`
}

func (c Cubic) beta() float64 {
	if c.Beta == 0 {
		return defaultCubicBeta
	}
	return c.Beta
}

// OnThrottled returns β·min(Rate, MeasuredRate); an unmeasured (0) send rate
// is left out.
func (c Cubic) OnThrottled(s RateState) float64 {
	w := s.Rate
	if m := s.MeasuredRate; m > 0 && m < w {
		w = m
	}
	return w * c.beta()
}

// OnSuccess returns the curve's rate when requests waited and the curve is
// above the current rate.
func (c Cubic) OnSuccess(s RateState) (float64, bool) {
	if !s.Waited {
		return 0, false
	}
	r := min(c.curve(s), sendRateCap*s.MeasuredRate, s.MaxRate)
	if !(r > s.Rate) {
		return 0, false
	}
	return r, true
}

// curve is the uncapped CUBIC rate for s, in units per minute: W and t come
// from s as OnSuccess describes.
func (c Cubic) curve(s RateState) float64 {
	w := s.RateBeforeLastDecrease
	if m := s.SendRateAtLastDecrease; m > 0 && m < w {
		w = m
	}
	ws := w / 60 // units per second
	var k float64
	if sc := c.ScaleConstant; sc > 0 {
		sc /= float64(max(s.InstanceCount, 1))
		k = math.Cbrt(ws * (1 - c.beta()) / sc)
	} else {
		k = defaultCubicPeriod.Seconds()
	}
	sc := ws * (1 - c.beta()) / (k * k * k)
	d := (s.SinceLastDecrease - s.PausedSinceLastDecrease).Seconds() - k
	return (sc*d*d*d + ws) * 60
}
