package sim_test

import (
	"fmt"
	"time"

	"github.com/headroom-go/headroom/sim"
)

// The recommended combination on the default scenario (the seeds'): two
// instances share a hidden quota of 3,000 units a minute; after minute 5
// another client takes half of it for 60 s.
func ExampleRun() {
	res, err := sim.Run(sim.Config{NoSeries: true}, sim.CubicQuota())
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %.0f units a minute, %.0f%% of the quota, %d 429s, %d gave up\n",
		res.Mode, res.Throughput, res.Share*100, res.Throttled, res.GaveUp)
	// Output: CUBIC + quota: 2828 units a minute, 98% of the quota, 24 429s, 0 gave up
}

// A mode from its -modes name, on a shorter run without the drop.
func ExampleModeNamed() {
	m, err := sim.ModeNamed("fixed-rate")
	if err != nil {
		panic(err)
	}
	res, err := sim.Run(sim.Config{Scenario: sim.Steady, Duration: 5 * time.Minute, NoSeries: true}, m)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %.0f units a minute, %d 429s\n", res.Mode, res.Throughput, res.Throttled)
	// Output: fixed rate: 1549 units a minute, 0 429s
}

// The model API alone: a quota of 10 units in any 60 s.
func ExampleNewAPI() {
	api := sim.NewAPI([]sim.QuotaStep{{At: 0, Units: 10}})
	fmt.Println(api.Handle(0, 8).Status)
	r := api.Handle(20*time.Second, 5)
	fmt.Println(r.Status, r.RetryAfter)
	fmt.Println(api.Handle(60*time.Second, 5).Status)
	// Output:
	// 200
	// 429 40s
	// 200
}
