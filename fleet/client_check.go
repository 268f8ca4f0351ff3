package fleet

import (
	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom"
)

// clientProblem checks that c honours the contexts the package gives each
// call. go-redis applies a context's deadline to the connection only with
// ContextTimeoutEnabled; without it a call to a server that has stopped
// answering waits for the client's ReadTimeout (3 s by default), whatever
// Options.Timeout says. A client of another type cannot be checked.
func clientProblem(c redis.UniversalClient) error {
	var enabled bool
	switch c := c.(type) {
	case nil:
		return &headroom.ConfigError{Package: "fleet", Field: "client", Value: nil, Want: "a Redis client"}
	case *redis.Client:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		enabled = c.Options().ContextTimeoutEnabled
	default:
		return nil
	}
	if !enabled {
		return &headroom.ConfigError{Package: "fleet", Field: "client.ContextTimeoutEnabled", Value: false,
			Want: "true, so that Options.Timeout bounds every call"}
	}
	return nil
}
