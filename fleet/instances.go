package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/problems"
)

// Instances counts the live processes of a fleet: each heartbeats its id
// into a sorted set on Redis, scored by the server's clock, every third of
// the TTL, and the count is the members whose last heartbeat is younger
// than two thirds of it. So a process that starts is counted by every other
// within one heartbeat, and one that stops — cleanly, or killed — is
// dropped by every other within one TTL. The set itself expires two TTLs
// after the last heartbeat.
//
// It is an adaptive.InstanceCounter: give it to an adaptive rate limiter
// (adaptive.RateConfig.InstanceCounter), whose share then follows the
// processes as they come and go, and to a shared limiter failing open
// (Options.Instances). Instances answers from memory; while Redis cannot
// be reached it keeps the last count.
type Instances struct {
	call *caller
	key  string
	id   string
	ttl  time.Duration
	// place holds the last count and this process's rank among the
	// members: count<<32 | rank, read together.
	place atomic.Uint64

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// NewInstances joins the fleet o.Name (under o.Prefix, with o.Timeout and
// o.MeterProvider; the other fields are the limiters'): it heartbeats once
// before it returns, so its count includes the processes already there,
// then every ttl/3 until Close. A first heartbeat that fails is no error:
// the count starts at 1 and the heartbeats go on.
func NewInstances(c redis.UniversalClient, ttl time.Duration, o Options) (*Instances, error) {
	if err := o.problems(func(l *problems.List) {
		checkClient(l, c)
		if ttl < 3*time.Millisecond {
			l.Add("ttl", ttl, "3ms or more")
		}
	}); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	i := &Instances{
		call: newCaller(c, o, metrics.NewFleetLog(o.MeterProvider, o.Name, o.Logger)),
		key:  o.key("instances"),
		id:   instanceID(),
		ttl:  ttl,
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	i.place.Store(1 << 32)
	i.beat()
	go i.run()
	return i, nil
}

// instanceID names this process: host, pid and a random part, so that two
// processes never share an id, even in containers that all run pid 1.
func instanceID() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// Instances is the last count, at least 1 (this process).
func (i *Instances) Instances() int { n, _ := i.rank(); return n }

// rank is the last count, at least 1, and this process's place among the
// members by id, from 0 to the count less one.
func (i *Instances) rank() (count, rank int) {
	p := i.place.Load()
	return int(p >> 32), int(p & (1<<32 - 1))
}

// Close stops the heartbeats and leaves the set, so that the others count
// one fewer at their next heartbeat rather than a TTL later. It is safe to
// call more than once; only the first removes the member.
func (i *Instances) Close() error {
	var err error
	i.closeOnce.Do(func() {
		close(i.stop)
		<-i.done
		err = i.call.do(context.Background(), metrics.OpHeartbeat, i.key, func(ctx context.Context) error {
			return i.call.client.ZRem(ctx, i.key, i.id).Err()
		})
	})
	return err
}

func (i *Instances) run() {
	defer close(i.done)
	t := time.NewTicker(i.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-i.stop:
			return
		case <-t.C:
			i.beat()
		}
	}
}

// beat heartbeats and takes the count; on failure the count is kept.
func (i *Instances) beat() {
	staleUS := (i.ttl - i.ttl/3).Microseconds()
	keepMS := (2 * i.ttl).Milliseconds()
	var r []int64
	err := i.call.do(context.Background(), metrics.OpHeartbeat, i.key, func(ctx context.Context) error {
		var err error
		r, err = heartbeatScript.Run(ctx, i.call.client, []string{i.key}, i.id, staleUS, keepMS).Int64Slice()
		return err
	})
	if err == nil && len(r) == 2 && r[0] >= 1 && r[1] >= 0 && r[1] < r[0] && r[0] < 1<<31 {
		i.place.Store(uint64(r[0])<<32 | uint64(r[1]))
		i.call.metrics.Counted(int(r[0]))
	}
}
