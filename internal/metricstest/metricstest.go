// Package metricstest reads what the module's instruments recorded, for
// the tests of every package: an OpenTelemetry SDK meter provider with a
// manual reader, and its data points as a flat list.
package metricstest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// New returns a manual reader and a meter provider that reports to it,
// shut down when t ends.
func New(t testing.TB) (*sdkmetric.ManualReader, *sdkmetric.MeterProvider) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() {
		if err := mp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r, mp
}

// A Point is one data point: its instrument, its aggregation, its
// attributes and its value.
type Point struct {
	Scope       string
	Name, Unit  string
	Kind        string // "sum", "monotonic sum", "gauge", "histogram"
	Temporality metricdata.Temporality
	Attrs       attribute.Set
	Value       float64   // sums and gauges
	Count       uint64    // histograms
	Sum         float64   // histograms
	Bounds      []float64 // histograms
	Buckets     []uint64  // histograms
}

// Attr is the point's attribute key as a string, "" when it has none.
func (p Point) Attr(key string) string {
	v, _ := p.Attrs.Value(attribute.Key(key))
	return v.String()
}

// AttrMap is every attribute of the point, values as strings.
func (p Point) AttrMap() map[string]string {
	m := map[string]string{}
	for _, kv := range p.Attrs.ToSlice() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// Collect reads r and returns its points, sorted by instrument and
// attributes. An aggregation other than the module's (int64 sums, int64
// and float64 gauges, float64 histograms) fails t.
func Collect(t testing.TB, r sdkmetric.Reader) []Point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	var ps []Point
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			p := Point{Scope: sm.Scope.Name, Name: m.Name, Unit: m.Unit}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				p.Kind, p.Temporality = "sum", d.Temporality
				if d.IsMonotonic {
					p.Kind = "monotonic sum"
				}
				for _, dp := range d.DataPoints {
					p.Attrs, p.Value = dp.Attributes, float64(dp.Value)
					ps = append(ps, p)
				}
			case metricdata.Gauge[int64]:
				p.Kind = "gauge"
				for _, dp := range d.DataPoints {
					p.Attrs, p.Value = dp.Attributes, float64(dp.Value)
					ps = append(ps, p)
				}
			case metricdata.Gauge[float64]:
				p.Kind = "gauge"
				for _, dp := range d.DataPoints {
					p.Attrs, p.Value = dp.Attributes, dp.Value
					ps = append(ps, p)
				}
			case metricdata.Histogram[float64]:
				p.Kind, p.Temporality = "histogram", d.Temporality
				for _, dp := range d.DataPoints {
					p.Attrs, p.Count, p.Sum, p.Bounds, p.Buckets = dp.Attributes, dp.Count, dp.Sum, dp.Bounds, dp.BucketCounts
					ps = append(ps, p)
				}
			default:
				t.Errorf("%s: unexpected aggregation %T", m.Name, m.Data)
			}
		}
	}
	slices.SortFunc(ps, func(a, b Point) int {
		return strings.Compare(a.Name+a.Attrs.Encoded(attribute.DefaultEncoder()), b.Name+b.Attrs.Encoded(attribute.DefaultEncoder()))
	})
	return ps
}

// Sum adds up the values of the points, a histogram's count, by key(p);
// a point whose key is "" is left out.
func Sum(ps []Point, key func(Point) string) map[string]float64 {
	out := map[string]float64{}
	for _, p := range ps {
		k := key(p)
		if k == "" {
			continue
		}
		if p.Kind == "histogram" {
			out[k] += float64(p.Count)
		} else {
			out[k] += p.Value
		}
	}
	return out
}

// Names lists the instruments of the points, once each, sorted.
func Names(ps []Point) []string {
	set := map[string]bool{}
	for _, p := range ps {
		set[p.Name] = true
	}
	return slices.Sorted(maps.Keys(set))
}
