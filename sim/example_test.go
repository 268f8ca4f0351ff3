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
	mode, err := sim.ModeNamed("cubic+quota")
	if err != nil {
		panic(err)
	}
	res, err := sim.Run(sim.Config{NoSeries: true}, mode)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %.0f units a minute, %.0f%% of the quota, %d 429s, %d gave up\n",
		res.Mode, res.Throughput, res.Share*100, res.Throttled, res.GaveUp)
	// Output: CUBIC + quota: 2829 units a minute, 98% of the quota, 19 429s, 0 gave up
}

// A mode from its -modes name, on a shorter run without the drop.
func ExampleModeNamed() {
	m, err := sim.ModeNamed("fixed-rate")
	if err != nil {
		panic(err)
	}
	res, err := sim.Run(sim.Config{Scenario: "steady", Duration: 5 * time.Minute, NoSeries: true}, m)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %.0f units a minute, %d 429s\n", res.Mode, res.Throughput, res.Throttled)
	// Output: fixed rate: 1549 units a minute, 0 429s
}

// Another server, by the names the command's flags take: a token bucket of
// 50 units a second that publishes draft-06 headers, for a minute.
func ExampleServerKindNamed() {
	kind, err := sim.ServerKindNamed("Token Bucket")
	if err != nil {
		panic(err)
	}
	publish, err := sim.PublishNamed("draft6")
	if err != nil {
		panic(err)
	}
	mode, err := sim.ModeNamed("cubic+quota")
	if err != nil {
		panic(err)
	}
	cfg := sim.Config{Scenario: "steady", Duration: time.Minute, Quota: 50, NoSeries: true,
		Server: sim.Server{Kind: kind, Window: time.Second, Publish: publish}}
	res, err := sim.Run(cfg, mode)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s against a %s: %.0f%% of the allowance, %d 429s\n", res.Mode, cfg.Server, res.AllowanceShare*100, res.Throttled)
	// Output: CUBIC + quota against a token bucket (burst a window), 1 s window, publishing draft-6: 97% of the allowance, 0 429s
}
