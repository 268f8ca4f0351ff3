package fleet

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// nodeOf names the Redis node a client sends a key's commands to, for the
// telemetry of each call: a single node's address; for a Cluster, the
// master that serves the key's slot in the client's view; for a Sentinel
// (failover) client, the address of the master it last connected to. Other
// clients name none.
type nodeOf struct {
	fixed   string
	cluster *redis.ClusterClient
	dialed  *dialedAddr
}

// failoverAddr is the address go-redis gives the options of a client of
// NewFailoverClient, whose master is found through Sentinel.
const failoverAddr = "FailoverClient"

func newNodeOf(c redis.UniversalClient) nodeOf {
	switch c := c.(type) {
	case *redis.ClusterClient:
		return nodeOf{cluster: c}
	case *redis.Client:
		if c.Options().Addr != failoverAddr {
			return nodeOf{fixed: c.Options().Addr}
		}
		d := &dialedAddr{}
		c.AddHook(d)
		return nodeOf{dialed: d}
	}
	return nodeOf{}
}

func (n nodeOf) addr(key string) string {
	switch {
	case n.cluster != nil:
		c, err := n.cluster.MasterForKey(context.Background(), key)
		if err != nil {
			return ""
		}
		return c.Options().Addr
	case n.dialed != nil:
		if a := n.dialed.last.Load(); a != nil {
			return *a
		}
		return ""
	}
	return n.fixed
}

// failed is told of a call that Redis did not answer. A Cluster client
// keeps its map of slots for a minute (ClusterStateReloadInterval) unless a
// node answers MOVED, and a dead master answers nothing: so that the
// client finds the replica that took over, the map is reloaded, at most
// once per 200 ms (go-redis's own cooldown).
func (n nodeOf) failed() {
	if n.cluster != nil {
		n.cluster.ReloadState(context.Background())
	}
}

// dialedAddr is a go-redis hook that keeps the remote address of the
// client's last new connection: after a failover the client reconnects,
// to the new master.
type dialedAddr struct{ last atomic.Pointer[string] }

func (d *dialedAddr) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err == nil {
			a := conn.RemoteAddr().String()
			d.last.Store(&a)
		}
		return conn, err
	}
}

func (d *dialedAddr) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (d *dialedAddr) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
