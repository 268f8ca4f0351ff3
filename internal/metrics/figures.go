package metrics

import (
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom/telemetry"
)

// Figure is a gauge a limiter reads from its own state when the meter
// collects, rather than keeping it in an atomic on its fast path.
type Figure int

// The figures, in the order of figureDefs.
const (
	InUse Figure = iota
	Available
	Instances
	BudgetRate
	Ceiling
	PublishedRate
	SendRate
	Paused
	LatencyBaseline
	LatencyRound
	figureCount
)

var figureDefs = [figureCount]struct{ name, unit, desc string }{
	InUse:           {telemetry.InUseName, "{permit}", "Permits in use: held by leases, or spent within the burst or window."},
	Available:       {telemetry.AvailableName, "{permit}", "Permits a caller could take now."},
	Instances:       {telemetry.InstancesName, "{instance}", "Processes sharing the budget."},
	BudgetRate:      {telemetry.BudgetRateName, "{permit}/min", "The whole budget's rate, all instances together."},
	Ceiling:         {telemetry.CeilingName, "{permit}/min", "The highest rate this process may reach."},
	PublishedRate:   {telemetry.PublishedRateName, "{permit}/min", "The published quota as a rate for the whole budget; 0 when none is known."},
	SendRate:        {telemetry.SendRateName, "{permit}/min", "The measured send rate."},
	Paused:          {telemetry.PausedName, "{pause}", "1 while paused after a Retry-After, else 0."},
	LatencyBaseline: {telemetry.LatencyBaselineName, "s", "The baseline latency: the 10th percentile of recent calls, under its ceiling."},
	LatencyRound:    {telemetry.LatencyRoundName, "s", "The fastest call of the latest completed round."},
}

// Figures is what a sampler reports through, during one collection.
type Figures struct {
	o metric.Observer
	m *Limiter
}

// Set reports figure f's value.
func (f Figures) Set(g Figure, v float64) {
	if uint(g) < uint(figureCount) {
		f.o.ObserveFloat64(f.m.figureG[g], v, f.m.base...)
	}
}

// SetDuration reports figure f's value, a duration, in seconds.
func (f Figures) SetDuration(g Figure, d time.Duration) { f.Set(g, d.Seconds()) }

// Sample arranges for read to report the limiter's figures each time the
// meter collects. read runs on the collecting goroutine; it must not
// reference the limiter that owns m (use a weak.Pointer), or that
// limiter is never collected. Set it once, right after NewLimiter. A
// folded series (see HostSeries) reports no figures.
func (m *Limiter) Sample(read func(Figures)) {
	if m != nil && m.into == nil {
		m.sample.Store(&read)
	}
}
