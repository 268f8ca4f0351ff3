package fleet

import (
	"testing"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
)

const (
	testTTL   = 300 * time.Millisecond
	heartbeat = testTTL / 3
	// slack covers a heartbeat's round trip and the ticker's delivery on a
	// loaded machine.
	slack = 40 * time.Millisecond
)

func newTestInstances(t *testing.T, o Options) *Instances {
	t.Helper()
	c, _ := testRedis(t)
	i, err := NewInstances(c, testTTL, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { i.Close() })
	return i
}

// A process that joins counts the others at once, and they count it within
// one heartbeat; one that leaves cleanly is gone within one heartbeat.
func TestInstancesCountJoinAndLeave(t *testing.T) {
	_, prefix := testRedis(t)
	o := Options{Name: "fleet", Prefix: prefix}
	a := newTestInstances(t, o)
	if n := a.Instances(); n != 1 {
		t.Fatalf("alone: %d", n)
	}
	b := newTestInstances(t, o)
	if n := b.Instances(); n != 2 {
		t.Errorf("the newcomer counts %d, want 2 at once", n)
	}
	if d := eventually(t, heartbeat+slack, "the first process counts the newcomer", func() bool { return a.Instances() == 2 }); d > heartbeat+slack {
		t.Errorf("counted after %v", d)
	}
	b.Close()
	eventually(t, heartbeat+slack, "the first process drops the one that left", func() bool { return a.Instances() == 1 })
}

// A process that stops without a word (killed) is dropped by the others
// within one TTL of its last heartbeat, and not before two heartbeats
// have been missed.
func TestInstancesDropStoppedWithinTTL(t *testing.T) {
	_, prefix := testRedis(t)
	o := Options{Name: "fleet", Prefix: prefix}
	a := newTestInstances(t, o)
	b := newTestInstances(t, o)
	eventually(t, heartbeat+slack, "both counted", func() bool { return a.Instances() == 2 })
	// Kill b: its heartbeats stop, and nothing removes it.
	close(b.stop)
	<-b.done
	b.closeOnce.Do(func() {})
	stopped := time.Now()
	eventually(t, testTTL+slack, "the killed process dropped", func() bool { return a.Instances() == 1 })
	if d := time.Since(stopped); d < testTTL-2*heartbeat {
		t.Errorf("dropped %v after its last heartbeat, before two were missed", d)
	}
}

// An adaptive rate limiter counting with Instances takes its share of the
// whole budget: half of it once a second process has joined.
func TestAdaptiveRateShareFollowsInstances(t *testing.T) {
	_, prefix := testRedis(t)
	o := Options{Name: "fleet", Prefix: prefix}
	a := newTestInstances(t, o)
	newTestInstances(t, o)
	eventually(t, heartbeat+slack, "both counted", func() bool { return a.Instances() == 2 })
	lim, err := limit.AdaptiveRate(adaptive.RateConfig{InitialUnitsPerMinute: 1200, InstanceCounter: a})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	lease, err := lim.Acquire(t.Context()) // the limiter polls its counter on use
	if err != nil {
		t.Fatal(err)
	}
	lease.Release()
	if s := lim.State(); s.Instances != 2 || s.Rate != s.WholeRate/2 {
		t.Errorf("instances %d, rate %v of %v; want 2 and half", s.Instances, s.Rate, s.WholeRate)
	}
}

// While Redis is down the count is the last one; when it is back the
// heartbeats resume and the count follows again.
func TestInstancesKeepCountWhileRedisDown(t *testing.T) {
	p := startPrivateRedis(t)
	o := Options{Name: "fleet", Timeout: 50 * time.Millisecond}
	a, _ := NewInstances(p.client(t), testTTL, o)
	defer a.Close()
	b, _ := NewInstances(p.client(t), testTTL, o)
	defer b.Close()
	a.beat()
	if n := a.Instances(); n != 2 {
		t.Fatalf("count %d, want 2", n)
	}
	p.stop()
	a.beat()
	if n := a.Instances(); n != 2 {
		t.Errorf("Redis down: count %d, want the last, 2", n)
	}
	p.start()
	c, _ := NewInstances(p.client(t), testTTL, o) // the new server starts empty
	defer c.Close()
	eventually(t, heartbeat+slack, "counting again after the restart", func() bool { return a.Instances() == 3 })
}
