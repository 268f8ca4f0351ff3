package sim

import (
	"fmt"
	"slices"
	"strings"
)

// The kinds of server-side limiter the model API can be (Server.Kind), one
// file each; the names are the acceptance suite's, and Server's doc says
// what each does.
const (
	kindFixedWindow    = "fixed-window"
	kindSlidingLog     = "sliding-log"
	kindSlidingCounter = "sliding-counter"
	kindTokenBucket    = "token-bucket"
	kindLeakyBucket    = "leaky-bucket"
)

// serverKinds lists the kinds, in the order the command shows them.
var serverKinds = []string{kindFixedWindow, kindSlidingLog, kindSlidingCounter, kindTokenBucket, kindLeakyBucket}

// What a server can publish (Server.Publish); publish.go writes each, and
// Server's doc says what each holds.
const (
	publishNone       = "none"
	publishRetryAfter = "retry-after"
	publishDraft6     = "draft-6"
	publishDraft3     = "draft-3"
	publishXRateLimit = "x-ratelimit"
	publishEnvoy      = "envoy"
)

// publishes lists what a server can publish, in the order the command
// shows them.
var publishes = []string{publishNone, publishRetryAfter, publishDraft6, publishDraft3, publishXRateLimit, publishEnvoy}

// ServerKinds lists the names Server.Kind takes, in the order the command
// shows them: fixed-window, sliding-log, sliding-counter, token-bucket,
// leaky-bucket.
func ServerKinds() []string { return slices.Clone(serverKinds) }

// Publishes lists the names Server.Publish takes, in the order the command
// shows them: none, retry-after, draft-6, draft-3, x-ratelimit, envoy.
func Publishes() []string { return slices.Clone(publishes) }

// ServerKindNamed returns the kind a name means, as Server.Kind takes it,
// ignoring case, spaces, dashes and underscores; "fixed" is fixed-window.
func ServerKindNamed(name string) (string, error) {
	if normalize(name) == "fixed" {
		return kindFixedWindow, nil
	}
	if k, ok := named(serverKinds, name); ok {
		return k, nil
	}
	return "", fmt.Errorf("sim: unknown server %q; want one of: %s", name, strings.Join(serverKinds, ", "))
}

// PublishNamed returns what a name means a server publishes, as
// Server.Publish takes it, ignoring case, spaces, dashes and underscores
// ("draft6", "x_ratelimit").
func PublishNamed(name string) (string, error) {
	if p, ok := named(publishes, name); ok {
		return p, nil
	}
	return "", fmt.Errorf("sim: unknown publish %q; want one of: %s", name, strings.Join(publishes, ", "))
}

// named finds name in names, the way normalize compares them.
func named(names []string, name string) (string, bool) {
	key := normalize(name)
	for _, n := range names {
		if normalize(n) == key {
			return n, true
		}
	}
	return "", false
}

// normalize is s in lower case without spaces, dashes and underscores, so
// that "No-Limiter", "no_limiter" and "no limiter" are one name.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_':
			return -1
		}
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// takesBurst reports whether the kind has a bucket whose depth Burst sets.
func takesBurst(kind string) bool { return kind == kindTokenBucket || kind == kindLeakyBucket }
