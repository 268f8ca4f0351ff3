package fleet

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
)

// Sharding needs an *Instances, to place each process on a shard, and a
// limit large enough for every shard's share to hold a permit.
func TestShardsNeedInstancesAndRoom(t *testing.T) {
	c, prefix := testRedis(t)
	inst, err := NewInstances(c, time.Second, Options{Name: "s", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	for _, tc := range []struct {
		o     Options
		burst int
	}{
		{Options{Name: "s", Prefix: prefix, Shards: 2}, 10},
		{Options{Name: "s", Prefix: prefix, Shards: 2, Instances: countTo2()}, 10},
		{Options{Name: "s", Prefix: prefix, Shards: 4, Instances: inst}, 7},
		{Options{Name: "s", Prefix: prefix, Shards: -1}, 10},
	} {
		if _, err := PerSecond(c, 100, tc.burst, tc.o); !errors.Is(err, headroom.ErrConfig) {
			t.Errorf("Shards %d, Instances %T, burst %d: %v, want a ConfigError", tc.o.Shards, tc.o.Instances, tc.burst, err)
		}
	}
	if _, err := PerWindow(c, 7, time.Second, Options{Name: "s", Prefix: prefix, Shards: 4, Instances: inst}); !errors.Is(err, headroom.ErrConfig) {
		t.Errorf("PerWindow of 7 over 4 shards: %v, want a ConfigError", err)
	}
}

func countTo2() *countTo { c := &countTo{}; c.n.Store(2); return c }

// shardedFleet is n processes of a sharded PerSecond on clients, each with
// its instance count; it waits until every process counts them all.
func shardedFleet(t *testing.T, clients []redis.UniversalClient, s shape, shards int, ttl time.Duration) ([]limit.Limiter, []*Instances, Options) {
	t.Helper()
	prefix := testPrefix()
	t.Cleanup(func() { deleteKeys(t, clients[0], prefix) })
	var lims []limit.Limiter
	var insts []*Instances
	o := Options{Name: "sharded", Prefix: prefix, Shards: shards, QueueLimit: new(100)}
	for _, c := range clients {
		inst, err := NewInstances(c, ttl, Options{Name: o.Name, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Close() })
		o.Instances = inst
		lim, err := s.build(c, o)
		if err != nil {
			t.Fatal(err)
		}
		lims, insts = append(lims, lim), append(insts, inst)
	}
	for _, inst := range insts {
		waitUntil(t, 2*ttl, "every process to count the others", func() bool { return inst.Instances() == len(clients) })
	}
	return lims, insts, o
}

// Four processes on two shards: each process's rank places it, two on each
// shard, every shard holding its processes' share, so that together they
// admit the limit, no more (the shape's bound plus what is in flight) and
// not much less.
func TestShardsShareTheLimit(t *testing.T) {
	c, _ := testRedis(t)
	clients := []redis.UniversalClient{c, c, c, c}
	s := shape{name: "PerSecond", rate: 400, burst: 40}
	lims, insts, o := shardedFleet(t, clients, s, 2, time.Second)
	ranks := map[int]bool{}
	for _, inst := range insts {
		_, r := inst.rank()
		ranks[r] = true
	}
	if len(ranks) != 4 {
		t.Fatalf("ranks %v, want 0 to 3, one each", ranks)
	}
	tl := newTally()
	tl.driveFor(lims, faultCallers, 2*time.Second)
	tl.check(t)
	e, bound := s.excess(tl.grants), s.faultBound(false, 0, 4, faultCallers, 0)
	used := float64(len(tl.grants)) / (float64(s.burst) + s.rate*tl.since().Seconds())
	t.Logf("%d grants, %.1f%% of what the limit allows; excess %.0f, bound %.0f", len(tl.grants), 100*used, e, bound)
	if e > bound {
		t.Errorf("excess %.0f over the limit, more than the %.0f in flight", e, bound)
	}
	if used < 0.9 {
		t.Errorf("%.1f%% of the limit used, want at least 90%%", 100*used)
	}
	for i := range 2 {
		if n, _ := c.Exists(context.Background(), o.shardKey("bucket", i)).Result(); n != 1 {
			t.Errorf("shard %d's key %s was never written", i, o.shardKey("bucket", i))
		}
	}
}

// On the Cluster, each shard's key has a slot of its own, and the shards
// rebalance as a process leaves: four processes on two shards, then one
// closes its count mid-run and the other three take its share at their next
// heartbeat. Over the run the excess stays within what is in flight plus
// the transition's bound (docs/fleet.md): while the processes' views of
// the count differ, for at most one TTL, the shards may admit the burst
// and the rate over that TTL times k/(n−k) more, for k of n leaving.
func TestClusterShards(t *testing.T) {
	tp := needTopology(t)
	tp.clusterHealthy(t)
	var clients []redis.UniversalClient
	for range 4 {
		clients = append(clients, tp.clusterClient(t, nil))
	}
	s := shape{name: "PerSecond", rate: 400, burst: 40}
	const ttl = 600 * time.Millisecond
	lims, insts, o := shardedFleet(t, clients, s, 2, ttl)
	ctx := context.Background()
	slots := map[int64]bool{}
	for i := range 2 {
		slot, err := clients[0].ClusterKeySlot(ctx, o.shardKey("bucket", i)).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot] = true
	}
	if len(slots) != 2 {
		t.Errorf("the two shards' keys are in slots %v, want two", slots)
	}
	tl := newTally()
	tl.driveFor(lims, faultCallers, 1500*time.Millisecond)
	left := tl.since()
	insts[3].Close()
	tl.driveFor(lims[:3], faultCallers, 1500*time.Millisecond)
	tl.check(t)
	e := s.excess(tl.grants)
	transition := (float64(s.burst) + ttl.Seconds()*s.rate) * 1 / 3
	bound := s.faultBound(false, 0, 4, faultCallers, 0) + transition
	after := float64(len(tl.grants)-countBefore(tl.grants, left+ttl)) / (s.rate * (tl.since() - left - ttl).Seconds())
	t.Logf("shards in slots %v; %d grants; excess %.0f, bound %.0f (%.0f of it the transition's); "+
		"%.1f%% of the limit used by the three left, from one TTL after the fourth left", slots, len(tl.grants), e, bound, transition, 100*after)
	if e > bound {
		t.Errorf("excess %.0f, more than the %.0f docs/fleet.md allows", e, bound)
	}
	if after < 0.9 {
		t.Errorf("the three processes left used %.1f%% of the limit, want at least 90%%", 100*after)
	}
	// Rebalanced, each of the three has a third; placed by the count of
	// four, one of them would have a shard's half and two a quarter.
	for p := range 3 {
		mine := tl.byProcess[p]
		share := float64(len(mine)-countBefore(mine, left+ttl)) / float64(len(tl.grants)-countBefore(tl.grants, left+ttl))
		t.Logf("process %d: %.1f%% of the grants after the rebalance", p, 100*share)
		if share < 0.28 || share > 0.39 {
			t.Errorf("process %d had %.1f%% of the grants, want about a third: the shares did not rebalance", p, 100*share)
		}
	}
	for _, inst := range insts[:3] {
		if n := inst.Instances(); n != 3 {
			t.Errorf("a process counts %d, want 3", n)
		}
	}
}

// countBefore is how many of the sorted times ts are before at.
func countBefore(ts []time.Duration, at time.Duration) int {
	n := 0
	for _, t := range ts {
		if t < at {
			n++
		}
	}
	return n
}
