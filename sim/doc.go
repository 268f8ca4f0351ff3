// Package sim is headroom's deterministic discrete-event simulator: the
// library's own engine cores, on virtual time, against a model API with a
// hidden quota. It is what cmd/headroom-sim runs; see
// docs/simulator.md for the model, the comparison and the numbers.
//
// # The world
//
// API is the model API: a hidden quota of units per window, kept by one
// kind of server-side limiter (Server, ServerKind), a 429 with Retry-After
// (whole seconds until the request would fit) for a request that would go
// over, the rate-limit headers the server publishes (Publish), and a quota
// schedule (QuotaStep). The kinds, one file each behind one small
// interface: FixedWindow (express-rate-limit, ulule/limiter), SlidingLog
// (the seeds' model: an exact sliding window, 60 s by default),
// SlidingCounter (go-chi/httprate, Cloudflare, HAProxy), TokenBucket
// (x/time/rate, GCRA, redis_rate) and LeakyBucket (nginx's limit_req, with
// its burst, nodelay and delay=, a held request answering late:
// Response.Delay). Each counts a request when it arrives; its answer and
// headers reach the client a leg later. What it publishes: nothing,
// Retry-After alone, draft-06 RateLimit-* with RateLimit-Policy, draft-03
// RateLimit-* from 80% of the quota as SharePoint sends them, or
// X-RateLimit-* with an epoch reset and a Date, in whole seconds rounded as
// real servers round them (publish.go). The seeds' API is a sliding log of
// 60 s publishing draft-03 (NewAPI, Server's zero value).
//
// Config describes a run: the seed, the instances, the quota, the server,
// the Poisson demand of each instance, the cost mix (Cost, DefaultCosts),
// the network (Latency), the retry handler's attempts, and the Scenario
// (Steady, Drop, Join). Zero fields take their defaults (Config.Defaults),
// the seeds' scenario; Config.Validate lists every problem at once.
// Config.Allowance is the most units an ideal client could have had
// accepted from a fresh server of the kind, the yardstick of
// Result.AllowanceShare.
//
// # Modes
//
// A Mode gives each instance its limiter: NoLimiter, FixedRate, AIMD,
// CUBIC, RateMode (any adaptive.RateConfig), AdaptiveConcurrency,
// QuotaGuard and Combined (GuardOptions), and CubicQuota, the combination
// that meets the target of docs/simulator.md. DefaultModes lists the
// command's modes; ModeNamed and ModeNames find them by name.
//
// Every mode drives an engine core — adaptive.Rate, adaptive.Concurrency,
// quota.Guard — through the methods that take the time as an argument
// (TryAcquire, Enqueue, Dequeue, OnSuccess, OnThrottled, SetPublishedLimit;
// TryAcquire, Release; TryAcquireAt, Observe, State), passing the virtual clock
// (as a time.Time from a fixed epoch for the guard). The simulator adds
// only what a shell would: for the guard and the concurrency limit, whose
// cores do not queue, a FIFO queue bounded as the adaptive rate limiter's
// is (500 requests, 100 s). Config.Trace sees every call made on an
// adaptive.Rate (TraceEvent); replaying a trace on a fresh core gives the
// same rates bit for bit, which is how the tests prove that the simulator
// holds no model of its own.
//
// # Results
//
// Run runs one mode and returns a Result with the seeds' columns
// (throughput, share of the mean quota, 429s, rejected, gave up, p95 wait,
// recovery), the share of the allowance and of the attempts sent that got
// a 429, and a per-second time series (Sample). RunSeeds runs many seeds
// and gives the Spread (median, minimum, maximum) of each column. Runs are
// deterministic: seeded PCG streams, a virtual clock, a container/heap event
// queue, no goroutine and no real time.
package sim
