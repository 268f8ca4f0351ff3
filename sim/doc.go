// Package sim is headroom's deterministic discrete-event simulator: the
// library's own engine cores, on virtual time, against a model API with a
// hidden quota. It is what cmd/headroom-sim runs; see docs/simulator.md
// for the model, the comparison and the numbers.
//
// A run takes a Config and a Mode and returns a Result:
//
//	mode, err := sim.ModeNamed("cubic+quota")
//	...
//	res, err := sim.Run(sim.Config{Scenario: "steady"}, mode)
//
// # The world
//
// The model API keeps a hidden quota of units per window with one kind of
// server-side limiter (Server.Kind, one of ServerKinds): a fixed window
// (express-rate-limit, ulule/limiter), a sliding log (the seeds' model: an
// exact sliding window, 60 s by default), a sliding counter
// (go-chi/httprate, Cloudflare, HAProxy), a token bucket (x/time/rate,
// GCRA, redis_rate) or a leaky bucket (nginx's limit_req, with its burst,
// nodelay and delay=, a held request answering late). A request that would
// go over gets a 429 with Retry-After (whole seconds until it would fit).
// Each kind counts a request when it arrives; its answer and headers reach
// the client a leg later. What the server publishes (Server.Publish, one of
// Publishes): nothing, Retry-After alone, draft-06 RateLimit-* with
// RateLimit-Policy, draft-03 RateLimit-* from 80% of the quota as
// SharePoint sends them, or X-RateLimit-* with an epoch reset and a Date,
// in whole seconds rounded as real servers round them. The seeds' API,
// Server's zero value, is a sliding log of 60 s publishing draft-03.
// ServerKindNamed and PublishNamed read the names as the command's flags
// take them.
//
// Config describes a run: the seed, the instances, the quota, the server,
// the Poisson demand of each instance, the cost mix (Cost), the network
// (Latency), the retry handler's attempts, and the scenario — "steady",
// "drop" (the seeds': another client takes half of the quota for a
// minute), "join" (one more instance) or "mixed" (a steady quota, a fifth
// of the requests critical and the rest background work, three quotas of
// demand; Result.ByPriority says what each level met). Zero fields take their defaults
// (Config.Defaults), the seeds' scenario; Config.Validate lists every
// problem at once.
//
// # Modes
//
// A Mode gives each instance its limiter. Modes lists them in the order
// the command's table shows them — no limiter, fixed rate, AIMD, CUBIC,
// adaptive concurrency, quota guard, CUBIC + quota, the combination that
// meets the target of docs/simulator.md, CUBIC + quota + priorities (the
// same reading each request's priority), and the ideal client — and
// ModeNamed finds one by name. The ideal client knows the server's kind,
// window, burst and quota schedule but not a request's latency before it
// sends it: it sends only what every arrival the latency allows would have
// accepted, and is the yardstick of what could be had at all.
//
// Every mode but the ideal client drives an engine core — adaptive.Rate,
// adaptive.Concurrency, quota.Guard — through the methods that take the
// time as an argument (TryAcquire, Enqueue, Dequeue, OnSuccess,
// OnThrottled, SetPublishedLimit; TryAcquire, Release; TryAcquireAt,
// Observe, State), passing the virtual clock (as a time.Time from a fixed
// epoch for the guard). The simulator adds only what a shell would: for the
// guard and the concurrency limit, whose cores do not queue, a FIFO queue
// bounded as the adaptive rate limiter's is (500 requests, 100 s). The
// tests record every call made on an adaptive.Rate and replay it on a
// fresh core, which gives the same rates bit for bit: the simulator holds
// no model of the library (the ideal client is a model of a client that
// knows the server, not of the library).
//
// # Results
//
// Run runs one mode and returns a Result with the seeds' columns
// (throughput, share of the mean quota, 429s, rejected, gave up, p95 wait,
// recovery), the share of the allowance (the most units an ideal client
// could have had accepted from a fresh server of the kind) and of the
// attempts sent that got a 429, and a per-second time series (Sample).
// RunSeeds runs many seeds and gives the Spread (median, minimum, maximum)
// of each column.
//
// Runs are deterministic — seeded PCG streams, a virtual clock, an event
// queue whose ties break in the order the events were scheduled, no
// goroutine and no real time. Each instance's quota guard draws its backoff
// jitter from a source seeded by the run's seed (quota.Options.Seed).
package sim
