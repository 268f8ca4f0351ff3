package fleet

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// sentinelClient is one process's client of the topology's master, found
// through its Sentinels.
func (tp *topology) sentinelClient(t *testing.T) *redis.Client {
	c := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: tp.masterName, SentinelAddrs: tp.sentinels,
		ContextTimeoutEnabled: true, DialTimeout: 100 * time.Millisecond,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// sentinelMaster is the master as the first Sentinel that answers names it.
func (tp *topology) sentinelMaster(t *testing.T) string {
	t.Helper()
	for _, s := range tp.sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		addr, err := c.GetMasterAddrByName(context.Background(), tp.masterName).Result()
		c.Close()
		if err == nil && len(addr) == 2 {
			return net.JoinHostPort(addr[0], addr[1])
		}
	}
	t.Fatal("no Sentinel names the master")
	return ""
}

// sentinelHealthy waits until every Sentinel names the same master, which
// answers as a master with one replica whose link is up: the state each
// test starts from and leaves behind.
func (tp *topology) sentinelHealthy(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	waitUntil(t, 30*time.Second, "the Sentinel topology to be healthy", func() bool {
		var master string
		for _, s := range tp.sentinels {
			c := redis.NewSentinelClient(&redis.Options{Addr: s, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
			addr, err := c.GetMasterAddrByName(ctx, tp.masterName).Result()
			replicas, rerr := c.Replicas(ctx, tp.masterName).Result()
			c.Close()
			if err != nil || rerr != nil || len(addr) != 2 || (master != "" && master != net.JoinHostPort(addr[0], addr[1])) {
				return false
			}
			master = net.JoinHostPort(addr[0], addr[1])
			up := 0
			for _, r := range replicas {
				if r["flags"] == "slave" && r["master-link-status"] == "ok" {
					up++
				}
			}
			if up != 1 {
				return false
			}
		}
		repl, err := node(t, master).Info(ctx, "replication").Result()
		return err == nil && strings.Contains(repl, "role:master") && strings.Contains(repl, "connected_slaves:1")
	})
}

// A master behind Sentinel dies mid-run (SIGKILL) and Sentinel promotes its
// replica: the same goals hold as on the Cluster.
func TestSentinelFailover(t *testing.T) {
	tp := needTopology(t)
	failovers(t, tp.sentinelHealthy, func(t *testing.T) redis.UniversalClient { return tp.sentinelClient(t) },
		func(t *testing.T, _ string) (string, func()) {
			master := tp.sentinelMaster(t)
			return master, func() { tp.sentinelPromoted(t, master) }
		},
		tp.sentinelRejoin)
}

// sentinelPromoted waits until the Sentinels name a master other than the
// killed one, and it answers as master.
func (tp *topology) sentinelPromoted(t *testing.T, killed string) {
	t.Helper()
	waitUntil(t, 15*time.Second, "Sentinel to promote the replica", func() bool {
		now := tp.sentinelMaster(t)
		if now == killed {
			return false
		}
		role, err := node(t, now).Do(context.Background(), "ROLE").Slice()
		return err == nil && len(role) > 0 && role[0] == "master"
	})
}

// sentinelRejoin starts the killed master again as the new master's
// replica: what Sentinel does to an old master it sees again, done at once
// rather than at its next look.
func (tp *topology) sentinelRejoin(t *testing.T, master string) {
	tp.revive(t, master)
	host, port, _ := net.SplitHostPort(tp.sentinelMaster(t))
	node(t, master).Do(context.Background(), "REPLICAOF", host, port)
}

// Four OS processes share a hidden quota through the master behind
// Sentinel, for each shape: at least 95% used, at most 1% over.
func TestSentinelSharing(t *testing.T) {
	tp := needTopology(t)
	tp.sentinelHealthy(t)
	sharing(t, "Sentinel", "sentinel:"+tp.masterName+"@"+strings.Join(tp.sentinels, ","), tp.sentinelClient(t))
}
