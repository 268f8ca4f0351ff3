package sim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// The scenarios (Config.Scenario): what happens to the quota and the
// instances during a run.
const (
	// scenarioSteady keeps the quota and the instances as they start.
	scenarioSteady = "steady"
	// scenarioDrop lets another client take DropShare of the quota for
	// DropFor from DropAt on (the seeds' scenario: half of it for 60 s
	// after minute 5).
	scenarioDrop = "drop"
	// scenarioJoin adds one instance at JoinAt; every limiter takes its new
	// share.
	scenarioJoin = "join"
	// scenarioMixed keeps the quota steady and gives each request a
	// priority: CriticalShare of them critical, the rest background, with
	// a demand of three times the quota unless Demand says otherwise.
	scenarioMixed = "mixed"
)

// scenarios lists the scenarios, in the order the command shows them.
var scenarios = []string{scenarioSteady, scenarioDrop, scenarioJoin, scenarioMixed}

// mixedOverload is the mixed scenario's demand, in quotas: three times
// what the API accepts, so that background work always has more to send
// than the quota leaves it.
const mixedOverload = 3

// Cost is one class of request in the demand: Units per request, drawn with
// probability Weight/(sum of weights).
type Cost struct {
	Units  int
	Weight float64
}

// defaultCosts is the default mix of request costs: 55% cost 1, 35% cost 2,
// 10% cost 5, a mean of 1.75 units (SharePoint's resource units: 1 for a
// single-item read, 2 for a multi-item query or a write, 5 for a permission
// operation; its rule of thumb is about 2 a request). See docs/simulator.md
// for why this mix.
var defaultCosts = []Cost{{1, 0.55}, {2, 0.35}, {5, 0.10}}

// Latency is the one-way network delay, drawn uniformly from [Min, Max] for
// each leg (client to API, API to client).
type Latency struct {
	Min, Max time.Duration
}

// Config is one run's world: the API, the clients and the scenario. The zero
// value of a field means its default; Defaults fills them in.
type Config struct {
	Seed      uint64        // 42
	Instances int           // 2 at the start
	Quota     int           // 3,000 units per Server.Window (60 s)
	Server    Server        // a sliding log of 60 s publishing draft-03
	Demand    float64       // 2,000 units a minute for each instance
	Duration  time.Duration // 15 min
	Scenario  string        // drop; or steady, join

	Costs    []Cost  // 55% cost 1, 35% cost 2, 10% cost 5
	Latency  Latency // 20–60 ms each way
	Attempts int     // 4: the first try and 3 retries

	DropAt    time.Duration // 5 min
	DropFor   time.Duration // 60 s
	DropShare float64       // 0.5: the share of the quota the other client takes
	JoinAt    time.Duration // 5 min

	// CriticalShare is the share of the mixed scenario's requests that are
	// critical (the rest are background work): 0.2.
	CriticalShare float64

	// NoSeries skips the per-second time series.
	NoSeries bool
	// trace, when set, sees every call the simulator makes on an engine
	// core, with the core's rate after it: the tests replay the calls.
	trace func(traceEvent)
}

// Defaults returns c with every zero field set to its default.
func (c Config) Defaults() Config {
	if c.Seed == 0 {
		c.Seed = 42
	}
	if c.Instances == 0 {
		c.Instances = 2
	}
	if c.Quota == 0 {
		c.Quota = 3000
	}
	c.Server = c.Server.defaults()
	if c.Demand == 0 && c.Scenario == scenarioMixed {
		// Each instance's share of three quotas a minute.
		c.Demand = mixedOverload * float64(c.Quota) * float64(time.Minute) / float64(c.Server.Window) / float64(c.Instances)
	}
	if c.Demand == 0 {
		c.Demand = 2000
	}
	if c.Duration == 0 {
		c.Duration = 15 * time.Minute
	}
	if c.Scenario == "" {
		c.Scenario = scenarioDrop
	}
	if c.Costs == nil {
		c.Costs = defaultCosts
	}
	if c.Latency == (Latency{}) {
		c.Latency = Latency{Min: 20 * time.Millisecond, Max: 60 * time.Millisecond}
	}
	if c.Attempts == 0 {
		c.Attempts = 4
	}
	if c.DropAt == 0 {
		c.DropAt = 5 * time.Minute
	}
	if c.DropFor == 0 {
		c.DropFor = time.Minute
	}
	if c.DropShare == 0 {
		c.DropShare = 0.5
	}
	if c.JoinAt == 0 {
		c.JoinAt = 5 * time.Minute
	}
	if c.CriticalShare == 0 {
		c.CriticalShare = 0.2
	}
	return c
}

// Validate lists every problem with c (after Defaults) at once, joined
// with errors.Join; each is a *headroom.ConfigError, so that
// errors.Is(err, headroom.ErrConfig) holds.
func (c Config) Validate() error {
	l := problems.New("sim")
	bad := l.Add
	if c.Instances < 1 || c.Instances > 1000 {
		bad("Instances", c.Instances, "1 to 1000")
	}
	if c.Quota < 1 {
		bad("Quota", c.Quota, "1 or more units per window")
	}
	if !(c.Demand > 0) || math.IsInf(c.Demand, 0) || c.Demand > 1e7 {
		bad("Demand", c.Demand, "more than 0 and at most 10,000,000 units a minute")
	}
	if c.Duration < time.Second || c.Duration > 24*time.Hour {
		bad("Duration", c.Duration, "1s to 24h")
	}
	if !slices.Contains(scenarios, c.Scenario) {
		bad("Scenario", c.Scenario, "steady, drop, join or mixed")
	}
	maxCost := c.validateCosts(bad)
	if c.Latency.Min < 0 || c.Latency.Max < c.Latency.Min {
		bad("Latency", fmt.Sprintf("%v–%v", c.Latency.Min, c.Latency.Max), "0 <= Min <= Max")
	}
	if c.Attempts < 1 || c.Attempts > 100 {
		bad("Attempts", c.Attempts, "1 to 100")
	}
	if !(c.CriticalShare > 0 && c.CriticalShare <= 1) {
		bad("CriticalShare", c.CriticalShare, "above 0 and at most 1")
	}
	if !(c.DropShare >= 0 && c.DropShare < 1) {
		bad("DropShare", c.DropShare, "at least 0 and below 1")
	}
	for _, t := range []struct {
		field string
		at    time.Duration
	}{{"DropAt", c.DropAt}, {"DropFor", c.DropFor}, {"JoinAt", c.JoinAt}} {
		if t.at < 0 {
			bad(t.field, t.at, "0 or more")
		}
	}
	if c.Quota >= 1 {
		c.Server.check(l.At("Server"), c.schedule(), maxCost)
	}
	// A scenario whose event falls after the end would print a scenario
	// that never happened, and a recovery that cannot be measured.
	switch {
	case c.Scenario == scenarioDrop && c.DropAt+c.DropFor >= c.Duration:
		bad("Duration", c.Duration, fmt.Sprintf("above %v, when scenario drop takes the quota from %v to %v; or scenario steady",
			c.DropAt+c.DropFor, c.DropAt, c.DropAt+c.DropFor))
	case c.Scenario == scenarioJoin && c.JoinAt >= c.Duration:
		bad("Duration", c.Duration, fmt.Sprintf("above %v, when scenario join adds an instance then; or scenario steady", c.JoinAt))
	}
	return l.Err()
}

// validateCosts reports every bad cost, and returns the largest cost.
func (c Config) validateCosts(bad func(field string, value any, want string)) (maxCost int) {
	sum := 0.0
	maxCost = 1
	for i, k := range c.Costs {
		maxCost = max(maxCost, k.Units)
		if k.Units < 1 || !(k.Weight >= 0) || math.IsInf(k.Weight, 0) {
			bad(fmt.Sprintf("Costs[%d]", i), fmt.Sprintf("%d units with weight %v", k.Units, k.Weight),
				"1 or more units and a weight of 0 or more")
		}
		sum += k.Weight
	}
	if !(sum > 0) {
		bad("Costs", "no weight above 0", "at least one cost with a weight above 0")
	}
	return maxCost
}

// schedule is the quota schedule of the scenario.
func (c Config) schedule() []quotaStep {
	s := []quotaStep{{0, c.Quota}}
	if c.Scenario == scenarioDrop {
		s = append(s,
			quotaStep{c.DropAt, c.Quota - int(math.Round(float64(c.Quota)*c.DropShare))},
			quotaStep{c.DropAt + c.DropFor, c.Quota})
	}
	return s
}

// meanQuota is the time-weighted mean of the quota over the run, in units a
// minute (the quota is per Server.Window).
func (c Config) meanQuota() float64 {
	total := 0.0
	s := c.schedule()
	for i, step := range s {
		end := c.Duration
		if i+1 < len(s) {
			end = min(s[i+1].At, c.Duration)
		}
		if end > step.At {
			total += float64(step.Units) * (end - step.At).Seconds()
		}
	}
	return total / c.Duration.Seconds() * (float64(time.Minute) / float64(c.Server.defaults().Window))
}
