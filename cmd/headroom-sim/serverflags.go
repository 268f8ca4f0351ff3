package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-go/headroom/sim"
)

// defaultPerSecond is the quota when neither -quota nor -per-second is
// given: the seeds' 3,000 units a minute, over whatever -window says.
const defaultPerSecond = 50

// The kinds of server and the publish that some flags are for, named as
// sim.ServerKinds and sim.Publishes name them.
const (
	fixedWindow = "fixed-window"
	tokenBucket = "token-bucket"
	leakyBucket = "leaky-bucket"
	xRateLimit  = "x-ratelimit"
)

// serverFlags are the flags that pick the model API's limiter.
type serverFlags struct {
	server, window, publish, reset, epoch, costs, burst *string
	quota, delay                                        *int
	perSecond                                           *float64
	nodelay, aligned                                    *bool
}

func addServerFlags(fs *flag.FlagSet) *serverFlags {
	return &serverFlags{
		server: fs.String("server", "sliding-log", "the API's limiter: fixed-window (or fixed) | sliding-log | sliding-counter | token-bucket | leaky-bucket;\n"+
			"comma-separated, or all, for a table of each"),
		window:    fs.String("window", "60s", "the limiter's window (1s to 24h); comma-separated for a table of each"),
		quota:     fs.Int("quota", 3000, "the API's hidden quota, units per window (without it: 50 a second times the window)"),
		perSecond: fs.Float64("per-second", 0, "the quota as units a second instead of -quota: the quota is this times the window, a whole number"),
		burst: fs.String("burst", "0", "token-bucket: its capacity in units (0: the quota, a window's worth);\n"+
			"leaky-bucket: nginx's burst, the excess taken beyond the rate (0, nginx's default); comma-separated for a table of each"),
		nodelay: fs.Bool("nodelay", false, "leaky-bucket: serve the burst at once (nginx's nodelay)"),
		delay:   fs.Int("delay", 0, "leaky-bucket: serve the first N units of the excess at once and delay the rest (nginx's delay=N)"),
		aligned: fs.Bool("aligned", false, "fixed-window: windows are multiples of the window from the start, not from the first request after the last one"),
		reset:   fs.String("reset", "full", "token-bucket and leaky-bucket: the published reset is when the bucket is full again (full) or has one unit back (unit)"),
		publish: fs.String("publish", "draft-3", "what the API publishes: none | retry-after | draft-6 | draft-3 | x-ratelimit | envoy;\n"+
			"comma-separated, or all, for a table of each"),
		epoch: fs.String("epoch", "floor", "x-ratelimit: its epoch-seconds reset rounded down (floor, Go's time.Unix) or up (ceil, express-rate-limit)"),
		costs: fs.String("costs", "1:0.55,2:0.35,5:0.10", "the demand's request costs, UNITS:WEIGHT,...; \"1\" for requests of one unit (nginx counts requests)"),
	}
}

// configs turns the flags into one configuration per server asked for
// (kinds × windows × publishes), each a copy of base, and appends every
// problem to errs. set holds the flags given on the command line.
func (f *serverFlags) configs(base sim.Config, set map[string]bool, errs []error) ([]sim.Config, []error) {
	kinds, errs := parseList(f.server, "-server", sim.ServerKinds(), sim.ServerKindNamed, errs)
	publishes, errs := parseList(f.publish, "-publish", sim.Publishes(), sim.PublishNamed, errs)
	windows, errs := parseWindows(*f.window, errs)
	bursts, errs := parseBursts(*f.burst, errs)
	if set["costs"] {
		costs, err := parseCosts(*f.costs)
		if err != nil {
			errs = append(errs, err)
		}
		base.Costs = costs
	}
	errs = f.checkKinds(kinds, set, errs)
	unitReset, epochCeil, errs := f.parseResetAndEpoch(publishes, set, errs)
	if set["quota"] && set["per-second"] {
		errs = append(errs, fmt.Errorf("-quota %d and -per-second %v: give one or the other", *f.quota, *f.perSecond))
	}
	quotas := map[time.Duration]int{}
	for _, w := range windows {
		q, err := f.quotaFor(w, set)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		quotas[w] = q
	}
	var cfgs []sim.Config
	for _, k := range kinds {
		for _, w := range windows {
			q, ok := quotas[w]
			if !ok {
				continue
			}
			kb := []int{0} // a kind without a bucket has one row
			if isBucket(k) {
				kb = bursts
			}
			for _, b := range kb {
				for _, p := range publishes {
					c := base
					c.Server, c.Quota = f.serverFor(k, w, b, p, unitReset, epochCeil), q
					cfgs = append(cfgs, c)
				}
			}
		}
	}
	return cfgs, errs
}

func isBucket(kind string) bool { return kind == tokenBucket || kind == leakyBucket }

// checkKinds appends a problem for each flag given for a kind of server
// that -server does not name, and for -nodelay with -delay.
func (f *serverFlags) checkKinds(kinds []string, set map[string]bool, errs []error) []error {
	anyBucket := slices.ContainsFunc(kinds, isBucket)
	named := strings.Join(kinds, ",")
	if len(kinds) > 0 {
		if set["burst"] && !anyBucket {
			errs = append(errs, fmt.Errorf("-burst %s: only token-bucket and leaky-bucket have a bucket; -server is %s", *f.burst, named))
		}
		leaky := slices.Contains(kinds, leakyBucket)
		if (set["nodelay"] || set["delay"]) && !leaky {
			errs = append(errs, fmt.Errorf("-nodelay and -delay are nginx's: they need -server leaky-bucket; -server is %s", named))
		}
		if set["aligned"] && !slices.Contains(kinds, fixedWindow) {
			errs = append(errs, fmt.Errorf("-aligned is for fixed-window; -server is %s", named))
		}
		if set["reset"] && !anyBucket {
			errs = append(errs, fmt.Errorf("-reset is for token-bucket and leaky-bucket; -server is %s", named))
		}
	}
	if *f.nodelay && *f.delay != 0 {
		errs = append(errs, fmt.Errorf("-nodelay and -delay %d: nginx takes one or the other", *f.delay))
	}
	return errs
}

// parseResetAndEpoch reads -reset and -epoch, and appends a problem when
// -epoch is given without -publish x-ratelimit.
func (f *serverFlags) parseResetAndEpoch(publishes []string, set map[string]bool, errs []error) (unitReset, epochCeil bool, _ []error) {
	switch *f.reset {
	case "full":
	case "unit":
		unitReset = true
	default:
		errs = append(errs, fmt.Errorf("-reset %q: want full or unit", *f.reset))
	}
	switch *f.epoch {
	case "floor":
	case "ceil":
		epochCeil = true
	default:
		errs = append(errs, fmt.Errorf("-epoch %q: want floor or ceil", *f.epoch))
	}
	if set["epoch"] && len(publishes) > 0 && !slices.Contains(publishes, xRateLimit) {
		errs = append(errs, errors.New("-epoch is for -publish x-ratelimit"))
	}
	return unitReset, epochCeil, errs
}

// serverFor is the server of kind k, window w, burst b and publish p, with
// the flags that its kind and its publish take.
func (f *serverFlags) serverFor(k string, w time.Duration, b int, p string, unitReset, epochCeil bool) sim.Server {
	s := sim.Server{Kind: k, Window: w, Publish: p, Burst: b}
	if isBucket(k) {
		s.UnitReset = unitReset
	}
	if k == leakyBucket {
		s.NoDelay, s.Delay = *f.nodelay, *f.delay
	}
	if k == fixedWindow {
		s.Aligned = *f.aligned
	}
	if p == xRateLimit {
		s.EpochCeil = epochCeil
	}
	return s
}

// quotaFor is the quota over window w: -quota, or -per-second × w, or the
// default rate × w.
func (f *serverFlags) quotaFor(w time.Duration, set map[string]bool) (int, error) {
	switch {
	case set["quota"]:
		return *f.quota, nil
	case set["per-second"]:
		x := *f.perSecond * w.Seconds()
		if !(*f.perSecond > 0) || math.IsInf(x, 0) || x > math.MaxInt32 {
			return 0, fmt.Errorf("-per-second %v: want more than 0 and at most %d units per window", *f.perSecond, math.MaxInt32)
		}
		if r := math.Round(x); math.Abs(x-r) > 1e-9*max(1, r) || r < 1 {
			return 0, fmt.Errorf("-per-second %v over a %v window is %v units: want a whole number of 1 or more", *f.perSecond, w, x)
		}
		return int(math.Round(x)), nil
	}
	return max(int(math.Round(defaultPerSecond*w.Seconds())), 1), nil
}

// parseList reads a comma-separated list of names, or "all".
func parseList[T comparable](s *string, flagName string, all []T, named func(string) (T, error), errs []error) ([]T, []error) {
	if strings.TrimSpace(strings.ToLower(*s)) == "all" {
		return all, errs
	}
	var out []T
	names := strings.Split(*s, ",")
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			errs = append(errs, fmt.Errorf("%s %q: an empty name; want a name, a comma-separated list, or all", flagName, *s))
			break
		}
		v, err := named(n)
		if err != nil {
			errs = append(errs, err) // names the flag's value and what it wants, as -modes does
			continue
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, errs
}

func parseWindows(s string, errs []error) ([]time.Duration, []error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		d, err := time.ParseDuration(part)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("-window %q: want durations such as 10s or 1m, comma-separated", part))
		case d < time.Second || d > 24*time.Hour:
			errs = append(errs, fmt.Errorf("-window %v: want 1s to 24h", d))
		case !slices.Contains(out, d):
			out = append(out, d)
		}
	}
	return out, errs
}

func parseBursts(s string, errs []error) ([]int, []error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		b, err := strconv.Atoi(part)
		switch {
		case err != nil || b < 0:
			errs = append(errs, fmt.Errorf("-burst %q: want 0 or more units (0: the kind's default), comma-separated", part))
		case !slices.Contains(out, b):
			out = append(out, b)
		}
	}
	return out, errs
}

// parseCosts reads "1:0.55,2:0.35,5:0.1", or a bare "1" (weight 1).
func parseCosts(s string) ([]sim.Cost, error) {
	var costs []sim.Cost
	var errs []error
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		units, weight, hasWeight := strings.Cut(part, ":")
		u, uerr := strconv.Atoi(strings.TrimSpace(units))
		w := 1.0
		var werr error
		if hasWeight {
			w, werr = strconv.ParseFloat(strings.TrimSpace(weight), 64)
		}
		if uerr != nil || werr != nil || u < 1 || !(w >= 0) || math.IsInf(w, 0) {
			errs = append(errs, fmt.Errorf("-costs %q: want UNITS:WEIGHT pairs such as 1:0.55,2:0.45 (units 1 or more, weights 0 or more)", part))
			continue
		}
		costs = append(costs, sim.Cost{Units: u, Weight: w})
	}
	return costs, errors.Join(errs...)
}
