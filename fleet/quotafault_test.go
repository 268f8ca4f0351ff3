package fleet

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/limit"
)

// quotaFault is what a fault test's SharedQuota callers saw.
type quotaFault struct {
	mu          sync.Mutex
	start       time.Time
	admitted    int
	answered    map[int][]time.Duration // per process: answers from Redis (admitted or refused)
	unavailable int
	late, lost  int
}

const (
	quotaPublished = 10_000 // the remaining a response published
	quotaReserved  = 200    // the 2% the views keep back
)

// sharedQuotaFailover runs four processes' views of one published quota
// (failing closed), four callers each reserving a unit every 5 ms, kills
// the master that serves the view's key a second in (masterOf names it and
// returns what waits for the promotion), and rejoins it. Every call must
// end in time with a reservation or a typed error; every process must get
// answers again within resumeWithin of the promotion; and the units
// reserved must stay within what was published less the reserve, plus the
// reservations the failover forgot (read from the view afterwards) and one
// unit per caller in flight.
func sharedQuotaFailover(t *testing.T, clients []redis.UniversalClient, masterOf func(key string) (string, func()), rejoin func(string)) {
	prefix := testPrefix()
	t.Cleanup(func() { deleteKeys(t, clients[0], prefix) })
	ctx := context.Background()
	var views []*SharedQuota
	for _, c := range clients {
		views = append(views, newTestQuota(t, c, prefix, nil))
	}
	if err := views[0].Observe(ctx, "api", published("10000", "10000", "60"), time.Now()); err != nil {
		t.Fatal(err)
	}
	master, promotion := masterOf(views[0].key("api"))
	f := &quotaFault{start: time.Now(), answered: map[int][]time.Duration{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p, v := range views {
		for range faultCallers {
			wg.Go(func() { f.reserve(p, v, stop) })
		}
	}
	timer := time.NewTimer(time.Second)
	<-timer.C
	killed := time.Since(f.start)
	needTopology(t).kill(t, master)
	promotion()
	promoted := time.Since(f.start)
	timer.Reset(2 * time.Second)
	<-timer.C
	close(stop)
	wg.Wait()
	rejoin(master)
	st, err := views[1].State(ctx, "api")
	if err != nil {
		t.Fatal(err)
	}
	f.check(t, st.Remaining, killed, promoted)
}

// reserve is one caller: a unit every 5 ms until stop.
func (f *quotaFault) reserve(p int, v *SharedQuota, stop <-chan struct{}) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
		start := time.Now()
		err := v.Acquire(ctx, "api", 1)
		took := time.Since(start)
		cancel()
		var rl *limit.RateLimitedError
		f.mu.Lock()
		if took > callDeadline+callSlack {
			f.late++
		}
		switch {
		case err == nil || errors.As(err, &rl):
			if err == nil {
				f.admitted++
			}
			f.answered[p] = append(f.answered[p], time.Since(f.start))
		case errors.Is(err, ErrUnavailable):
			f.unavailable++
		default:
			f.lost++
		}
		f.mu.Unlock()
	}
}

func (f *quotaFault) check(t *testing.T, remaining int64, killed, promoted time.Duration) {
	t.Helper()
	forgotten := int(remaining) - (quotaPublished - f.admitted)
	bound := quotaPublished - quotaReserved + max(forgotten, 0) + faultProcesses*faultCallers
	resumed := time.Duration(0)
	for p := range faultProcesses {
		i := 0
		for i < len(f.answered[p]) && f.answered[p][i] < promoted {
			i++
		}
		if i == len(f.answered[p]) {
			t.Fatalf("process %d had no answer after the promotion", p)
		}
		resumed = max(resumed, f.answered[p][i]-promoted)
	}
	t.Logf("killed at %v, promoted %v later; %d units reserved, %d ErrUnavailable; the view holds %d, "+
		"so the failover forgot %d reservations; every process answered again %v after the promotion; bound %d",
		killed, promoted-killed, f.admitted, f.unavailable, remaining, forgotten, resumed, bound)
	if f.lost > 0 || f.late > 0 {
		t.Errorf("%d calls ended with neither a reservation nor a typed error, %d past their deadline", f.lost, f.late)
	}
	if resumed > resumeWithin {
		t.Errorf("the views answered again %v after the promotion, want within %v", resumed, resumeWithin)
	}
	if f.admitted > bound {
		t.Errorf("%d units reserved, more than the %d published less the reserve, forgotten and in flight", f.admitted, bound)
	}
}

// The views of a published quota through a Cluster failover.
func TestClusterSharedQuotaFailover(t *testing.T) {
	tp := needTopology(t)
	tp.clusterHealthy(t)
	var clients []redis.UniversalClient
	for range faultProcesses {
		clients = append(clients, tp.clusterClient(t, nil))
	}
	sharedQuotaFailover(t, clients, func(key string) (string, func()) {
		_, master, replica := tp.slotNodes(t, key)
		return master, func() { tp.promote(t, replica) }
	}, func(master string) { tp.revive(t, master); tp.clusterHealthy(t) })
}

// The views of a published quota through a Sentinel failover.
func TestSentinelSharedQuotaFailover(t *testing.T) {
	tp := needTopology(t)
	tp.sentinelHealthy(t)
	var clients []redis.UniversalClient
	for range faultProcesses {
		clients = append(clients, tp.sentinelClient(t))
	}
	sharedQuotaFailover(t, clients, func(string) (string, func()) {
		master := tp.sentinelMaster(t)
		return master, func() { tp.sentinelPromoted(t, master) }
	}, func(master string) { tp.sentinelRejoin(t, master); tp.sentinelHealthy(t) })
}
