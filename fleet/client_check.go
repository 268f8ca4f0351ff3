package fleet

import (
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/redis/go-redis/v9"
)

// checkClient records on l a client c that does not honour the contexts
// the package gives each
// call. go-redis applies a context's deadline to the connection only with
// ContextTimeoutEnabled; without it a call to a server that has stopped
// answering waits for the client's ReadTimeout (3 s by default), whatever
// Options.Timeout says. A client of another type cannot be checked.
func checkClient(l *problems.List, c redis.UniversalClient) {
	var enabled bool
	switch c := c.(type) {
	case nil:
		l.Add("client", nil, "a Redis client")
		return
	case *redis.Client:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		enabled = c.Options().ContextTimeoutEnabled
	default:
		return
	}
	if !enabled {
		l.Add("client.ContextTimeoutEnabled", false, "true, so that Options.Timeout bounds every call")
	}
}
