// Package adaptivetest is a model dependency for evaluating adaptive
// concurrency limits: c workers behind an unbounded FIFO queue, so that a
// call's latency is its service time plus its time in the queue, driven by
// an open-loop Poisson load on virtual time. Calls the limiter refuses are
// counted and not retried.
//
// Run is a single-threaded discrete-event simulation. It calls the limiter
// under test with the model time of each event, so an engine core (such as
// adaptive.Concurrency) runs on it directly. A limiter that reads the clock
// itself (limit.Adaptive, or a peer library in the bench module) runs inside
// a testing/synctest bubble behind an adapter that moves the bubble's clock
// to the model time before each call (Clock).
//
// The package lives in the main module, not in bench, so that the engine's
// own tests and the side-by-side benchmarks drive one and the same model;
// it is internal because only they need it (the bench module's path lies
// under the main module's, so Go lets it import the package).
package adaptivetest
