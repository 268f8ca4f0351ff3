//go:build !race

// The grid runs some 200 simulations of five minutes: under the race
// detector that takes minutes, so CI runs this test without it
// (.ci/run).

package main

import (
	"strings"
	"testing"

	"github.com/headroom-go/headroom/sim"
)

// gridGoalFloor is how many cells of the recommended mode's grid (gridArgs)
// meet their goal at least. Raise it as the client learns more; never
// lower it to make a change pass.
const gridGoalFloor = 115

// gridArgs is the grid of docs/simulator.md's "Goals": every kind of server
// over windows of 1 s, 10 s and 1 min at 50 units a second, buckets at a
// window's depth and at 20, through every dialect, one instance that
// always has a request ready, one-unit requests.
var gridArgs = strings.Fields(`-modes cubic+quota -goals -scenario steady -server all -window 1s,10s,60s -per-second 50
	-burst 0,20 -publish all -instances 1 -demand 20000 -duration 5m -costs 1`)

func TestGridGoalFloor(t *testing.T) {
	o, _, err := parse(gridArgs)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := gridGoals(o.modes, o.cfgs, o.seeds)
	if err != nil {
		t.Fatal(err)
	}
	met, of := metCount(cells, o.modes[0].Name)
	t.Logf("%d of %d cells meet their goal", met, of)
	if met < gridGoalFloor {
		for _, c := range cells {
			if !c.Met {
				t.Logf("missed: %v: %+v, ideal %+v, goal %+v", c.Config.Server, c.Got, c.Ideal, c.Goal)
			}
		}
		t.Errorf("%d of %d cells meet their goal; the floor is %d", met, of, gridGoalFloor)
	}
	// The table shows one ideal figure a row: the ideal reads no header and
	// is never throttled, so what a server publishes changes nothing for it.
	ideal := map[sim.Server]figure{}
	for _, c := range cells {
		if c.Ideal.Throttled != 0 {
			t.Errorf("%v: the ideal client had %.2f%% of its requests throttled; it never should", c.Config.Server, 100*c.Ideal.Throttled)
		}
		s := c.Config.Server
		s.Publish = ""
		if f, ok := ideal[s]; ok && f != c.Ideal {
			t.Errorf("%v: the ideal client had %+v here and %+v under another publish", c.Config.Server, c.Ideal, f)
		}
		ideal[s] = c.Ideal
	}
}
