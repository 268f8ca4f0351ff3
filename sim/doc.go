// Package sim is headroom's deterministic discrete-event simulator: the
// library's own engine cores, on virtual time, against a model API with a
// hidden quota (DESIGN rule 1). It is what cmd/headroom-sim runs; see
// docs/simulator.md for the model, the comparison and the numbers.
//
// # The world
//
// API is the model API: a hidden quota of units in an exact sliding window
// of 60 s (Window), a 429 with Retry-After (whole seconds until there is
// room) for a request that would go over, optional draft-03 rate-limit
// headers as SharePoint sends them, and a quota schedule (QuotaStep).
// Config describes a run: the seed, the instances, the quota, the Poisson
// demand of each instance, the cost mix (Cost, DefaultCosts), the network
// (Latency), the retry handler's attempts, and the Scenario (Steady, Drop,
// Join). Zero fields take their defaults (Config.Defaults), the seeds'
// scenario; Config.Validate lists every problem at once.
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
// (Acquire, Enqueue, Dequeue, OnSuccess, OnThrottled, SetPublishedLimit;
// TryAcquire, Release; AdmitN, Observe, State), passing the virtual clock
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
// recovery) and a per-second time series (Sample). RunSeeds runs many seeds
// and gives the Spread (median, minimum, maximum) of each column. Runs are
// deterministic: seeded PCG streams, a virtual clock, a container/heap event
// queue, no goroutine and no real time.
package sim
