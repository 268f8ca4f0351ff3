package bench

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkRedisAcquirePaired is one goroutine acquiring from redis_rate
// and from fleet in turn, one acquire of each per iteration, each with its
// own client: a paired comparison. On a machine others load, the load
// changes from second to second, and benchmarks run one after the other
// see different loads; acquires taken in turn see the same. It reports
// each one's mean and median latency, and fleet's over redis_rate's
// (under 1 is faster).
//
// Run: cd bench && go test -run '^$' -bench RedisAcquirePaired -count 10 -benchtime 10000x | tee paired.txt
func BenchmarkRedisAcquirePaired(b *testing.B) {
	ctx := context.Background()
	var acquires []func(ctx context.Context) bool
	for _, p := range redisPeers[:2] { // redis_rate, fleet
		c, _, prefix := benchRedis(b)
		a := p.make(b, c, prefix)
		if !a(ctx) { // loads the script: not measured
			b.Fatal("refused")
		}
		acquires = append(acquires, a)
	}
	lat := [2][]time.Duration{make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)}
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			k := (k + i) % 2 // who goes first alternates
			start := time.Now()
			if !acquires[k](ctx) {
				b.Fatal("refused")
			}
			lat[k] = append(lat[k], time.Since(start))
		}
	}
	var mean, median [2]float64
	for k := range 2 {
		var sum time.Duration
		for _, d := range lat[k] {
			sum += d
		}
		mean[k] = float64(sum.Microseconds()) / float64(len(lat[k]))
		slices.Sort(lat[k])
		median[k] = float64(lat[k][len(lat[k])/2].Nanoseconds()) / 1e3
	}
	b.ReportMetric(mean[0], "redis_rate-mean-µs")
	b.ReportMetric(mean[1], "fleet-mean-µs")
	b.ReportMetric(median[0], "redis_rate-p50-µs")
	b.ReportMetric(median[1], "fleet-p50-µs")
	b.ReportMetric(mean[1]/mean[0], "fleet/redis_rate-mean")
	b.ReportMetric(median[1]/median[0], "fleet/redis_rate-p50")
}
