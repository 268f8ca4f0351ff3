package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
)

// A Mode is a way for the clients to hold themselves back: each instance
// gets its own limiter from the mode, one of the library's engine cores
// driven on virtual time. Modes lists them and ModeNamed finds one by name;
// the zero Mode has no limiter, and Run refuses it.
type Mode struct {
	// Name is how the table and the -modes flag call the mode.
	Name string
	// headers makes the model API publish its rate-limit headers.
	headers bool
	// retry, when set, is the mode's own retry handler in place of the
	// simulator's (retryDelay, Config.Attempts): given the attempt that was
	// refused (1 for the first) and its response at now, whether to try
	// again and after how long.
	retry func(attempt int, resp *response, now time.Duration) (wait time.Duration, again bool)

	newLimiter func(env limiterEnv) (limiter, error)
}

// limiterEnv is what a mode knows when it builds an instance's limiter.
type limiterEnv struct {
	now       time.Duration
	instances int
	inst      int
	trace     func(traceEvent)
	// seed is the run's seed, for the engines that draw jitter: each
	// instance draws its own stream from it.
	seed uint64
	// cfg is the run's world, for the ideal client, which knows it.
	cfg Config
	// shared holds what the instances of the run's mode share, by a key of
	// the mode's own.
	shared map[any]any
}

// instanceSeed is the seed of instance inst's own random source in a run seeded
// with seed: distinct for every instance, never 0.
func (env limiterEnv) instanceSeed() uint64 { return env.seed*1009 + uint64(env.inst) + 1 }

type admit uint8

const (
	granted  admit = iota // send now
	queued                // the limiter grants it later, through poll
	rejected              // the limiter refuses it: counted, not retried
)

// pollOut collects what a poll decided.
type pollOut struct {
	granted  []*request
	rejected []*request
}

// limiter is the simulator's side of an engine core. Every method takes the
// virtual time.
type limiter interface {
	// acquire asks for req.cost units at now.
	acquire(now time.Duration, req *request) admit
	// poll grants the waiters whose units are there at now, in FIFO order,
	// and rejects those whose wait ran out. It returns when it next wants to
	// be polled (ok false: only a new event can change anything).
	poll(now time.Duration, out *pollOut) (next time.Duration, ok bool)
	// feedback reports the API's answer to an attempt this limiter sent.
	feedback(now time.Duration, req *request, resp *response)
	// setInstances tells the limiter how many instances share the budget.
	setInstances(now time.Duration, n int)
	// rate is this instance's rate at now, units a minute (0: none).
	rate(now time.Duration) float64
	// queued is the number of waiting requests.
	queued() int
}

// noLimiterMode is the "no limiter" mode: every attempt goes at once, and only
// the retry handler (Retry-After, 4 attempts) holds the clients back.
func noLimiterMode() Mode {
	return Mode{Name: "no limiter", newLimiter: func(limiterEnv) (limiter, error) { return noLimiter{}, nil }}
}

type noLimiter struct{}

func (noLimiter) acquire(time.Duration, *request) admit              { return granted }
func (noLimiter) poll(time.Duration, *pollOut) (time.Duration, bool) { return 0, false }
func (noLimiter) feedback(time.Duration, *request, *response)        {}
func (noLimiter) setInstances(time.Duration, int)                    {}
func (noLimiter) rate(time.Duration) float64                         { return 0 }
func (noLimiter) queued() int                                        { return 0 }

// modeNames lists the names of Modes, in table order.
func modeNames() []string {
	var s []string
	for _, m := range Modes() {
		s = append(s, m.Name)
	}
	return s
}

// ModeNamed returns the mode called name, ignoring case, spaces, dashes and
// underscores ("no-limiter", "fixed_rate", "CUBIC+quota"); the names are
// those of Modes.
func ModeNamed(name string) (Mode, error) {
	key := normalize(name)
	for _, m := range Modes() {
		if normalize(m.Name) == key {
			return m, nil
		}
	}
	return Mode{}, fmt.Errorf("sim: unknown mode %q; want one of: %s", name, strings.Join(modeNames(), ", "))
}

// Modes is every mode, in the order the command's table shows them: no
// limiter, retryablehttp (hashicorp/go-retryablehttp's retries), fixed
// rate, AIMD, CUBIC, adaptive concurrency, quota guard,
// CUBIC + quota, CUBIC + quota + priorities (the same reading each
// request's priority: the mixed scenario shows the difference), and the
// ideal client, the yardstick of what could be had
// at all (docs/simulator.md describes each).
func Modes() []Mode {
	return []Mode{noLimiterMode(), retryablehttpMode(), fixedRateMode(fixedRateUnitsPerMinute), aimdMode(adaptive.AIMD{}), cubicMode(adaptive.Cubic{}),
		concurrencyMode(adaptive.ConcurrencyConfig{}),
		quotaGuardMode(guardOptions{}),
		cubicQuotaMode(),
		cubicQuotaPrioritiesMode(),
		idealMode(),
	}
}
