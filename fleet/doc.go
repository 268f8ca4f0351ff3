// Package fleet shares rate limits between the processes of a fleet through
// Redis: limiters that every replica draws from (PerSecond, PerWindow), a
// live count of the processes (Instances), a shared view of the quotas a
// service publishes (SharedQuota), and a stated policy for when Redis
// fails. It is the only package of the module that imports the Redis
// client, github.com/redis/go-redis/v9, so a program that does not use it
// does not build it. Every constructor takes a redis.UniversalClient: a
// single node, Sentinel or Cluster.
//
// # Shared limiters
//
// PerSecond is a token bucket run as the generic cell rate algorithm (ITU-T
// I.371, as go-redis/redis_rate does); PerWindow a sliding window in
// segments. Each acquire is one Lua script, sent by EVALSHA and resent in
// full only when the server answers NOSCRIPT: one round trip. The script
// reads the time with TIME, so the Redis server's clock decides and the
// clients' clocks do not matter. Every key expires once it holds nothing a
// later call needs, and all of a limit's keys carry one hash tag,
// "{prefix:name}", so they share a Cluster slot.
//
// Both implement limit.Limiter: costs, an exact RetryAfter on refusal
// (*limit.RateLimitedError), and, with Options.QueueLimit above 0, FIFO
// waiting in the process up to the caller's deadline. QueueLimit is package
// limit's setting, with its meaning and defaults: nil is the kind's default
// (the limiters refuse at once, the shared quota holds), 0 refuses at once,
// n lets n permits' worth wait. A burst of 0 means 1, as limit.PerSecond's.
//
// # Round trips under load
//
// A limiter has one round trip out at a time. Callers of one process that
// come while it is out queue behind it, and the next round trip asks for
// all their permits at once and hands them out in order: Redis sees a
// fraction of the calls, and nothing is left over. With Options.Batch above
// 1 such a round trip takes at least Batch permits and keeps what is left
// for the next callers, so Redis sees fewer still. The price is stated:
// over any span, the fleet admits at most Batch permits per process more
// than the limit (docs/fleet.md).
//
// # When Redis fails
//
// Every call has a timeout (Options.Timeout), and a circuit stops calls to
// a dead server after three failures in a row, probing again on an
// exponential curve. Meanwhile Options.FailOpen decides: fail closed, the
// default, returns an *UnavailableError (ErrUnavailable), never a
// throttle; fail open enforces this process's share of the limit locally,
// the limit divided by the last instance count. Recovery is automatic, and
// Redis latency and errors go to OpenTelemetry under the names in
// package telemetry, each call with the address of the node that served it.
//
// # Cluster, Sentinel and shards
//
// All of one limit's keys share a slot, and its scripts touch only their
// own keys. When a master dies, its replica may not have received its last
// writes: over a span that holds one failover, or one restart of a server
// that keeps nothing on disk, the fleet may admit one full bucket (one
// window's permits) more, plus what the processes failing open admit on
// their shares over the outage (docs/fleet.md states the bound, and the
// tests hold real Cluster and Sentinel failovers to it). After a failed
// call a Cluster client reloads its map of the slots, so the fleet finds
// the promoted replica at its next probe. Options.Shards spreads a limit
// over several keys and so several slots, each holding the share of the
// processes placed on it.
//
// The scripts validate what they read: foreign values at a limiter's keys
// are repaired on the side that never admits more, and a rate or window
// the scripts cannot count is refused when built.
package fleet
