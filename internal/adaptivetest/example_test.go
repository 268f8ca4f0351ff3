package adaptivetest_test

import (
	"fmt"
	"time"

	"github.com/headroom-go/headroom/internal/adaptivetest"
)

// bulkhead is a fixed limit, the simplest limiter to put under the model
// (and the one the model's own tests use).
type bulkhead struct{ limit, inFlight int }

func (b *bulkhead) Acquire(time.Duration) (any, bool) {
	if b.inFlight >= b.limit {
		return nil, false
	}
	b.inFlight++
	return nil, true
}
func (b *bulkhead) Release(time.Duration, time.Duration, any) { b.inFlight-- }
func (b *bulkhead) Limit() int                                { return b.limit }

// A dependency of 10 workers at 100 ms a call serves 100 calls a second;
// offered 150 a second, a bulkhead of 10 refuses the excess and never
// lets a queue form: latency stays the service time.
func ExampleRun() {
	cfg := adaptivetest.Config{
		Exp:    100 * time.Millisecond,
		Load:   150,
		Phases: []adaptivetest.Phase{{Until: 30 * time.Second, Workers: 10}},
		Seed:   1,
	}
	r, err := adaptivetest.Run(cfg, &bulkhead{limit: 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := r.Phases[0]
	fmt.Printf("refused about a third: %v; p99 within 10%% of the unloaded p99: %v\n",
		p.Rejected*4 > p.Offered && p.Rejected*2 < p.Offered, p.P99 <= cfg.UnloadedP99()*11/10)
	// Output: refused about a third: true; p99 within 10% of the unloaded p99: true
}
