package acceptance

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"
)

// Matrix is the full set of cells: every kind of server and every header
// mode meets 1, 8 and 64 callers and windows of 1 s, 10 s and 60 s at
// least once (MatrixCoverage checks it); every real server appears, nginx
// without a burst (at 1 and 8 callers), with burst and nodelay, with burst
// and delay=, and with a burst delayed; a sliding log publishes draft-03's
// fields with no window, and token buckets Envoy's X-RateLimit-* with
// delta resets; limits run from 5 to 1,000 units a second; the servers
// that count units (ours) get mixed costs as well as cost 1; and the
// special cells — a quota that halves, an outage, connection resets — have
// goals of their own.
//
// Each cell runs for at least 3 windows and at least 20 s (runLength): 20 s
// for a 1 s window, 30 s for 10 s, 3 min for 60 s. The whole matrix, both
// clients side by side, takes about 34 minutes.
func Matrix() []Cell {
	const s, m = time.Second, time.Minute
	lim := func(units int, window time.Duration) Limit { return Limit{Units: units, Window: window} }
	cells := []Cell{
		// Windows of 60 s: one for each header mode and each kind.
		cell(Express(lim(600, m), PublishDraft7), 1, CostOne),
		cell(Express(lim(3000, m), PublishDraft8), 64, CostOne),
		cell(OwnSlidingLog(lim(1200, m), PublishRetryAfter), 8, CostMixed),
		cell(Tollbooth(Limit{Units: 600, Window: m, Burst: 100}), 8, CostOne),
		cell(HTTPRate(lim(6000, m), PublishXRateLimit), 64, CostOne),
		cell(Nginx(Limit{Units: 300, Window: m, Burst: 30, NoDelay: true}), 1, CostOne),

		// Windows of 10 s.
		cell(Express(lim(500, 10*s), PublishDraft6), 8, CostOne),
		cell(Express(lim(100, 10*s), PublishDraft7), 64, CostOne),
		cell(Express(lim(500, 10*s), PublishDraft8), 1, CostOne),
		cell(Express(lim(200, 10*s), PublishNone), 8, CostOne),
		cell(Express(lim(1000, 10*s), PublishXRateLimit), 64, CostOne),
		cell(OwnSlidingLog(lim(1000, 10*s), PublishDraft6), 64, CostMixed),
		cell(OwnSlidingLog(lim(100, 10*s), PublishNone), 1, CostMixed),
		cell(HTTPRate(lim(500, 10*s), PublishRetryAfter), 1, CostOne),
		cell(Ulule(lim(200, 10*s)), 1, CostOne),
		cell(Tollbooth(lim(1000, 10*s)), 64, CostOne),
		cell(Nginx(Limit{Units: 500, Window: 10 * s, Burst: 20, Delay: 10}), 8, CostOne),
		cell(HAProxy(lim(200, 10*s)), 64, CostOne),
		cell(OwnSlidingLog(lim(400, 10*s), PublishDraft3), 8, CostMixed),
		cell(EnvoyLocal(Limit{Units: 500, Window: 10 * s, Burst: 20}), 64, CostOne),

		// Windows of 1 s.
		cell(Express(lim(100, s), PublishDraft6), 64, CostOne),
		cell(Express(lim(50, s), PublishDraft7), 8, CostOne),
		cell(Express(lim(20, s), PublishDraft8), 8, CostOne),
		cell(Express(lim(10, s), PublishNone), 1, CostOne),
		cell(Express(lim(200, s), PublishXRateLimit), 1, CostOne),
		cell(OwnSlidingLog(lim(200, s), PublishDraft6), 8, CostMixed),
		cell(OwnSlidingLog(lim(50, s), PublishRetryAfter), 64, CostMixed),
		cell(OwnSlidingLog(lim(20, s), PublishNone), 8, CostOne),
		cell(HTTPRate(lim(1000, s), PublishXRateLimit), 64, CostOne),
		cell(HTTPRate(lim(50, s), PublishNone), 8, CostOne),
		cell(Ulule(lim(100, s)), 8, CostOne),
		cell(Tollbooth(lim(5, s)), 1, CostOne),
		cell(Nginx(Limit{Units: 100, Window: s, Burst: 50, NoDelay: true}), 64, CostOne),
		cell(Nginx(lim(20, s)), 8, CostOne),
		cell(Nginx(Limit{Units: 50, Window: s, Burst: 25}), 1, CostOne),
		cell(HAProxy(lim(100, s)), 8, CostOne),
		cell(EnvoyLocal(Limit{Units: 100, Window: s, Burst: 100}), 8, CostOne),
		cell(Nginx(lim(50, s)), 1, CostOne),
		cell(Nginx(lim(50, s)), 8, CostOne),

		// Our special servers.
		special(HalvingLog(lim(200, s), PublishDraft6, 10*s), 8, CostMixed, 20*s, HalvingGoals(PublishDraft6)),
		special(HalvingLog(lim(1000, 10*s), PublishRetryAfter, 20*s), 64, CostOne, 40*s, HalvingGoals(PublishRetryAfter)),
		special(OutageLog(lim(100, s), PublishDraft6, 10*s, 2*s), 8, CostOne, 20*s, OutageGoals(PublishDraft6)),
		special(ResettingLog(lim(100, s), PublishDraft6, resetFraction, 1), 8, CostOne, 20*s, ResetGoals(PublishDraft6)),
	}
	return cells
}

// ShortSlice is the matrix in small, for CI and go test: five cells of 20 to
// 30 s, each one the full matrix meets — a real Go middleware that
// publishes (ulule/limiter, 1 s windows), our sliding log published and counting
// mixed costs (10 s windows, 64 callers), and three external servers,
// express-rate-limit (draft-8) and nginx with no burst and with a burst of
// 25, which publish nothing. A slice of cells the client misses would only
// ever fail; the misses are in the full matrix's report.
func ShortSlice() []Cell {
	const s = time.Second
	d := 20 * s
	return []Cell{
		cell(Ulule(Limit{Units: 100, Window: s}), 8, CostOne),
		cell(OwnSlidingLog(Limit{Units: 1000, Window: 10 * s}, PublishDraft6), 64, CostMixed),
		sized(cell(Express(Limit{Units: 20, Window: s}, PublishDraft8), 8, CostOne), d),
		sized(cell(Nginx(Limit{Units: 20, Window: s}), 8, CostOne), d),
		sized(cell(Nginx(Limit{Units: 50, Window: s, Burst: 25}), 1, CostOne), d),
	}
}

// resetFraction is the share of new connections the resetting server
// resets.
const resetFraction = 0.1

// runLength is how long a cell with window w runs: at least 3 windows and
// at least 20 s.
func runLength(w time.Duration) time.Duration { return max(3*w, 20*time.Second) }

// cell is an ordinary cell of spec: its run length from its window, its
// seed from its name.
func cell(spec ServerSpec, callers int, costs CostMix) Cell {
	name := cellName(spec, callers, costs)
	return Cell{Name: name, Server: spec, Callers: callers, Duration: runLength(spec.Limit.Window),
		Costs: costs, Seed: seedOf(name)}
}

// special is a cell with its own run length and goals.
func special(spec ServerSpec, callers int, costs CostMix, d time.Duration, g Goals) Cell {
	c := cell(spec, callers, costs)
	c.Duration, c.Goals = d, &g
	return c
}

func sized(c Cell, d time.Duration) Cell {
	c.Duration = d
	return c
}

// cellName is "server/headers/limit/callers/costs", e.g.
// "go-chi-httprate/x-ratelimit/100per1s/8c/cost1"; the command's -cells
// flag matches it.
func cellName(spec ServerSpec, callers int, costs CostMix) string {
	l := spec.Limit
	limit := fmt.Sprintf("%dper%s", l.Units, shortDuration(l.Window))
	if l.Burst > 0 {
		limit += fmt.Sprintf("-burst%d", l.Burst)
	}
	switch {
	case l.NoDelay:
		limit += "-nodelay"
	case l.Delay > 0:
		limit += fmt.Sprintf("-delay%d", l.Delay)
	}
	cost := "cost1"
	if costs.Max() > 1 {
		cost = "mixed"
	}
	// The server's name without what the rest of the name says (nginx's
	// parameters, express's headers) and without separators of its own.
	server := spec.Name
	for _, family := range []string{"express-rate-limit", "nginx limit_req", "HAProxy"} {
		if strings.HasPrefix(server, family) {
			server = family
		}
	}
	server = strings.ToLower(strings.NewReplacer(" ", "-", ",", "", "/", "-").Replace(server))
	return fmt.Sprintf("%s/%s/%s/%dc/%s", server, spec.Headers, limit, callers, cost)
}

// shortDuration is "1s", "10s", "1m" rather than "1m0s".
func shortDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return d.String()
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// seedOf is a cell's seed: a hash of its name, so that it does not change
// when cells are added or reordered.
func seedOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// MatrixCoverage lists what cells fail to cover: a kind of server or a
// header mode that never meets one of 1, 8 and 64 callers or one of the
// windows 1 s, 10 s and 60 s, or a real server missing; and names that are
// not unique. The special cells count too.
func MatrixCoverage(cells []Cell) []string {
	var gaps []string
	callers := []int{1, 8, 64}
	windows := []time.Duration{time.Second, 10 * time.Second, time.Minute}
	kinds := []Kind{FixedWindow, SlidingLog, SlidingCounter, TokenBucket, LeakyBucket}
	modes := []Headers{PublishNone, PublishRetryAfter, PublishDraft6, PublishDraft7, PublishDraft8, PublishXRateLimit}
	check := func(what string, match func(Cell) bool) {
		for _, n := range callers {
			if !slices.ContainsFunc(cells, func(c Cell) bool { return match(c) && c.Callers == n }) {
				gaps = append(gaps, fmt.Sprintf("%s never meets %d callers", what, n))
			}
		}
		for _, w := range windows {
			if !slices.ContainsFunc(cells, func(c Cell) bool { return match(c) && c.Server.Limit.Window == w }) {
				gaps = append(gaps, fmt.Sprintf("%s never meets a %s window", what, shortDuration(w)))
			}
		}
	}
	for _, k := range kinds {
		check("kind "+string(k), func(c Cell) bool { return c.Server.Kind == k })
	}
	for _, h := range modes {
		check("headers "+string(h), func(c Cell) bool { return c.Server.Headers == h })
	}
	real := map[string]func(Cell) bool{
		"go-chi/httprate":     func(c Cell) bool { return c.Server.Name == "go-chi/httprate" },
		"ulule/limiter":       func(c Cell) bool { return c.Server.Name == "ulule/limiter" },
		"didip/tollbooth":     func(c Cell) bool { return c.Server.Name == "didip/tollbooth" },
		"HAProxy":             func(c Cell) bool { return strings.HasPrefix(c.Server.Name, "HAProxy") },
		"nginx without burst": func(c Cell) bool { return isNginx(c) && c.Server.Limit.Burst == 0 },
		"nginx burst nodelay": func(c Cell) bool { return isNginx(c) && c.Server.Limit.Burst > 0 && c.Server.Limit.NoDelay },
		"nginx burst delay=":  func(c Cell) bool { return isNginx(c) && c.Server.Limit.Burst > 0 && c.Server.Limit.Delay > 0 },
		"nginx burst, delayed": func(c Cell) bool {
			return isNginx(c) && c.Server.Limit.Burst > 0 && !c.Server.Limit.NoDelay && c.Server.Limit.Delay == 0
		},
		"express, none":            func(c Cell) bool { return isExpress(c) && c.Server.Headers == PublishNone },
		"express, draft-6":         func(c Cell) bool { return isExpress(c) && c.Server.Headers == PublishDraft6 },
		"express, draft-7":         func(c Cell) bool { return isExpress(c) && c.Server.Headers == PublishDraft7 },
		"express, draft-8":         func(c Cell) bool { return isExpress(c) && c.Server.Headers == PublishDraft8 },
		"express, x-ratelimit":     func(c Cell) bool { return isExpress(c) && c.Server.Headers == PublishXRateLimit },
		"httprate, headers off":    func(c Cell) bool { return c.Server.Name == "go-chi/httprate" && c.Server.Headers == PublishNone },
		"sliding log, draft-3":     func(c Cell) bool { return c.Server.Kind == SlidingLog && c.Server.Headers == PublishDraft3 },
		"envoy-style token bucket": func(c Cell) bool { return c.Server.Headers == PublishEnvoy },
		"nginx without burst, 1 caller": func(c Cell) bool {
			return isNginx(c) && c.Server.Limit.Burst == 0 && c.Callers == 1
		},
		"nginx without burst, 8 callers": func(c Cell) bool {
			return isNginx(c) && c.Server.Limit.Burst == 0 && c.Callers == 8
		},
	}
	for _, name := range slices.Sorted(maps.Keys(real)) {
		if !slices.ContainsFunc(cells, real[name]) {
			gaps = append(gaps, "no cell with "+name)
		}
	}
	seen := map[string]bool{}
	for _, c := range cells {
		if seen[c.Name] {
			gaps = append(gaps, fmt.Sprintf("two cells named %q", c.Name))
		}
		seen[c.Name] = true
	}
	return gaps
}

func isNginx(c Cell) bool   { return strings.HasPrefix(c.Server.Name, "nginx") }
func isExpress(c Cell) bool { return strings.HasPrefix(c.Server.Name, "express-rate-limit") }
