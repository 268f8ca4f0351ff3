package acceptance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// connectionRequests is how many responses a connection of the resetting
// server carries before it closes it (Connection: close), as servers with
// a keep-alive request cap do; without a cap a client would open its few
// connections once and meet no resets after the first seconds.
const connectionRequests = 20

// connectionResetter stands in front of a handler and resets a fraction of
// new connections: such a connection's first request is read, then the
// connection is closed with an RST (SO_LINGER 0) and no response, before
// next sees the request. Every other connection is served, and closed
// after maxRequests responses.
//
// Resets hit only a connection's first request because Go's http.Transport
// sends an idempotent request again by itself when a connection it reused
// fails before any response; a reset on a fresh connection is not resent,
// so it reaches the client's own retry layer as a network error.
type connectionResetter struct {
	next        http.Handler
	fraction    float64
	maxRequests int

	mu  sync.Mutex
	rng *rand.Rand

	resets atomic.Int64
}

type connStateKey struct{}

// connState is one connection's state; the requests of a connection are
// served one after the other, so it needs no lock.
type connState struct {
	doomed bool
	served int
}

func newConnectionResetter(next http.Handler, fraction float64, maxRequests int, seed uint64) (*connectionResetter, error) {
	if fraction < 0 || fraction > 1 {
		return nil, fmt.Errorf("reset fraction %g: want between 0 and 1", fraction)
	}
	if maxRequests < 1 {
		return nil, fmt.Errorf("requests per connection %d: want 1 or more", maxRequests)
	}
	return &connectionResetter{next: next, fraction: fraction, maxRequests: maxRequests,
		rng: rand.New(rand.NewPCG(seed, 0x5e7))}, nil
}

// configure makes the server give each connection its state.
func (c *connectionResetter) configure(s *http.Server) {
	s.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		c.mu.Lock()
		doomed := c.rng.Float64() < c.fraction
		c.mu.Unlock()
		return context.WithValue(ctx, connStateKey{}, &connState{doomed: doomed})
	}
}

func (c *connectionResetter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st, ok := r.Context().Value(connStateKey{}).(*connState)
	if !ok {
		http.Error(w, "connection resetter: no connection state (server not configured)", http.StatusInternalServerError)
		return
	}
	st.served++
	if st.doomed && st.served == 1 && c.reset(w) {
		return
	}
	if st.served >= c.maxRequests {
		w.Header().Set("Connection", "close")
	}
	c.next.ServeHTTP(w, r)
}

// reset closes the request's connection with an RST; it reports false,
// leaving the request to be served, if the connection cannot be taken over.
func (c *connectionResetter) reset(w http.ResponseWriter) bool {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		// Linger 0: close sends RST instead of FIN.
		tcp.SetLinger(0)
	}
	conn.Close()
	c.resets.Add(1)
	return true
}
