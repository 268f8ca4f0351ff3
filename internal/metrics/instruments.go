package metrics

import (
	"github.com/headroom-go/headroom/telemetry"

	"errors"
	"runtime/debug"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// instruments creates a recorder's instruments on headroom's meter and
// joins their errors, so that a constructor creates all of them and checks
// once: telemetry never fails a caller, it only reports through otel.Handle.
type instruments struct {
	meter metric.Meter
	err   error
}

// newInstruments opens telemetry.ScopeName's meter on mp; nil mp means the global
// meter provider.
func newInstruments(mp metric.MeterProvider) *instruments {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return &instruments{meter: mp.Meter(telemetry.ScopeName, metric.WithInstrumentationVersion(scopeVersion()))}
}

// scopeVersion is the version of the headroom module this program was
// built with, as the instrumentation scope's version: the module's
// version when it is a dependency, the main module's ("(devel)" in a
// checkout) when it is built itself, "" when the build has no such record.
var scopeVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if bi.Main.Path == module {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == module {
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
})

// module is headroom's module path.
const module = "github.com/headroom-go/headroom"

func (in *instruments) keep(err error) { in.err = errors.Join(in.err, err) }

func (in *instruments) counter(name, unit, desc string) metric.Int64Counter {
	c, err := in.meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	in.keep(err)
	return c
}

func (in *instruments) observableCounter(name, unit, desc string) metric.Int64ObservableCounter {
	c, err := in.meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	in.keep(err)
	return c
}

func (in *instruments) observableGauge(name, unit, desc string) metric.Int64ObservableGauge {
	g, err := in.meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	in.keep(err)
	return g
}

func (in *instruments) observableFloatGauge(name, unit, desc string) metric.Float64ObservableGauge {
	g, err := in.meter.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	in.keep(err)
	return g
}

func (in *instruments) gauge(name, unit, desc string) metric.Int64Gauge {
	g, err := in.meter.Int64Gauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	in.keep(err)
	return g
}

// histogram is a histogram of seconds with the given bucket boundaries.
func (in *instruments) histogram(name, desc string, buckets []float64) metric.Float64Histogram {
	h, err := in.meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(buckets...))
	in.keep(err)
	return h
}

// attrSet is the set of base and more, in a slice of its own so that
// appending never writes into base's backing array.
func attrSet(base []attribute.KeyValue, more ...attribute.KeyValue) attribute.Set {
	all := make([]attribute.KeyValue, 0, len(base)+len(more))
	return attribute.NewSet(append(append(all, base...), more...)...)
}
