package fleet

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/telemetry"
)

// SharedQuota is the fleet's shared view of the quotas a service publishes.
// What one process learns from a response — the remaining allowance, the
// reset, a Retry-After — is seen by every process whose SharedQuota has the
// same Prefix and Name, and each process reserves the units of its attempts
// from the shared remaining, so N processes cannot all spend it.
//
// It sits beside each process's quota.Guard, which goes on doing what only
// the process can (backoff, probing after a reset, in-flight caps): before
// an attempt call Acquire and then the guard; after it, Observe, which
// feeds the guard too.
//
//	if err := sq.Acquire(ctx, key, 1); err != nil {
//		return err // *limit.RateLimitedError: the fleet has spent the quota
//	}
//	// ... the guard's pre-attempt step, the attempt ...
//	sq.Observe(ctx, key, quota.Response{Status: resp.StatusCode, Header: resp.Header}, time.Now())
//
// The reserve kept back is 2% of the published limit, rounded down, as the
// guard's default; it is for traffic outside the fleet. While Redis cannot
// be reached the failure policy decides (Options.FailOpen): failing open
// admits, leaving the decision to each process's guard; failing closed
// refuses with an *UnavailableError. As a quota guard does, Acquire holds
// an attempt until the key has room, up to the context's deadline, unless
// Options.QueueLimit says otherwise: 0 refuses at once, n lets n units'
// worth of this process's attempts wait.
type SharedQuota struct {
	call       *caller
	guard      *quota.Guard
	name       string
	prefix     string
	queueLimit int64 // -1: no bound
	waiting    atomic.Int64
	failOpen   bool
	circuit    *circuit
}

const (
	// quotaReserve is the fraction of the published limit kept back.
	quotaReserve = 0.02
	// quotaUnknownReset is how long an attempt waits when the shared
	// remaining is spent and no reset was published: the quota guard's
	// default AssumedReset.
	quotaUnknownReset = time.Second
	// quotaKeep is the least time a view is kept after a response.
	quotaKeep = time.Minute
)

// NewSharedQuota returns the shared view o.Name on c (o.Prefix, o.Timeout,
// o.FailOpen, o.QueueLimit and o.MeterProvider apply; the other fields are
// the limiters'). guard, when not nil, is this process's guard, which
// Observe feeds as well.
func NewSharedQuota(c redis.UniversalClient, guard *quota.Guard, o Options) (*SharedQuota, error) {
	if err := o.problems(func(l *problems.List) { checkClient(l, c) }); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	s := &SharedQuota{
		call:       newCaller(c, o, metrics.NewFleetLog(o.MeterProvider, o.Name, o.Logger)),
		guard:      guard,
		name:       o.Name,
		prefix:     o.Prefix,
		queueLimit: -1,
		failOpen:   o.FailOpen,
		circuit:    newCircuit(),
	}
	if o.QueueLimit != nil {
		s.queueLimit = int64(*o.QueueLimit)
	}
	return s, nil
}

// key is the hash of a quota key; each has its own hash tag, so that a
// Cluster spreads the keys of one service over its slots.
func (s *SharedQuota) key(k string) string {
	return "{" + s.prefix + ":" + s.name + ":" + k + "}:quota"
}

// Observe takes what a response for key published, for every process: the
// binding bucket's remaining, limit and reset (quota.Parse) and the
// Retry-After (quota.ParseRetryAfter); now is when it was read. It feeds
// this process's guard first. A response that publishes nothing is not
// sent to Redis. The error is Redis's; the guard has been fed regardless.
func (s *SharedQuota) Observe(ctx context.Context, key string, r quota.Response, now time.Time) error {
	if s.guard != nil {
		s.guard.Observe(key, r, now)
	}
	q, hasQuota := quota.Parse(r.Header, now)
	ra, hasRA := quota.ParseRetryAfter(r.Header, now)
	if !hasQuota && !hasRA {
		return nil
	}
	var resetIn time.Duration
	if hasQuota && !q.Reset.IsZero() {
		resetIn = max(q.Reset.Sub(now), time.Microsecond)
	}
	keep := max(resetIn, ra, quotaKeep)
	if !s.circuit.allow() {
		return errCircuitOpen
	}
	err := s.call.do(ctx, metrics.OpQuotaPublish, s.key(key), func(ctx context.Context) error {
		return quotaPublishScript.Run(ctx, s.call.client, []string{s.key(key)}, boolArg(hasQuota), q.Remaining, q.Limit,
			resetIn.Microseconds(), ra.Microseconds(), keep.Milliseconds()).Err()
	})
	s.noteCall(ctx, err)
	return err
}

func boolArg(b bool) int {
	if b {
		return 1
	}
	return 0
}

// noteCall tells the circuit how a call went.
func (s *SharedQuota) noteCall(ctx context.Context, err error) {
	switch {
	case err == nil:
		s.circuit.succeeded()
		s.call.metrics.Answered(ctx)
	case ended(ctx):
		s.circuit.released()
	default:
		s.circuit.failed()
	}
}

// Acquire reserves cost units of key's shared remaining for an attempt. It
// returns nil when the attempt may go, as far as the fleet is concerned;
// otherwise a *limit.RateLimitedError whose RetryAfter is until the reset
// or the end of a Retry-After: after waiting for it when the context's
// deadline allows (else at once, with telemetry.ReasonDeadline), or at once
// when Options.QueueLimit is 0 or its units are already waiting. A cost
// below 1 counts as 1. A call whose context has ended reserves nothing
// (limit.ContextEnded).
func (s *SharedQuota) Acquire(ctx context.Context, key string, cost int) error {
	if ctx.Err() != nil {
		return limit.ContextEnded(ctx, s.name)
	}
	units := int64(max(cost, 1))
	for {
		wait, err := s.reserve(ctx, key, units)
		if err != nil || wait == 0 {
			return err
		}
		if err := s.hold(ctx, units, wait); err != nil {
			return err
		}
	}
}

// hold waits wait for cost units to be free, as the queue and the
// context's deadline allow.
func (s *SharedQuota) hold(ctx context.Context, cost int64, wait time.Duration) error {
	if s.queueLimit == 0 {
		return &limit.RateLimitedError{Limiter: s.name, RetryAfter: wait, Reason: telemetry.ReasonNoPermit}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return &limit.RateLimitedError{Limiter: s.name, RetryAfter: wait, Reason: telemetry.ReasonDeadline}
	}
	defer s.waiting.Add(-cost)
	if n := s.waiting.Add(cost); s.queueLimit > 0 && n > s.queueLimit {
		return &limit.RateLimitedError{Limiter: s.name, RetryAfter: wait, Reason: telemetry.ReasonQueueFull}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return limit.ContextEnded(ctx, s.name)
	}
}

// reserve runs quotaReserveScript: 0 when the units were taken, else the
// wait; Redis's failure goes to the failure policy.
func (s *SharedQuota) reserve(ctx context.Context, key string, cost int64) (time.Duration, error) {
	if !s.circuit.allow() {
		return 0, s.fallBack(ctx, errCircuitOpen)
	}
	var r []int64
	err := s.call.do(ctx, metrics.OpQuotaReserve, s.key(key), func(ctx context.Context) error {
		var err error
		r, err = quotaReserveScript.Run(ctx, s.call.client, []string{s.key(key)}, cost, quotaReserve,
			quotaUnknownReset.Microseconds()).Int64Slice()
		if err == nil && len(r) != 2 {
			err = fmt.Errorf("fleet: quota reserve script answered %d values, want 2", len(r))
		}
		return err
	})
	s.noteCall(ctx, err)
	switch {
	case err != nil && ended(ctx):
		return 0, limit.ContextEnded(ctx, s.name)
	case err != nil:
		return 0, s.fallBack(ctx, err)
	case r[0] == 1:
		return 0, nil
	}
	return max(time.Duration(r[1])*time.Microsecond, 1), nil
}

// fallBack decides an attempt Redis could not: failing open admits it
// (this process's guard still decides), failing closed refuses it.
func (s *SharedQuota) fallBack(ctx context.Context, err error) error {
	s.call.metrics.FellBack(ctx, s.failOpen)
	if s.failOpen {
		return nil
	}
	return &UnavailableError{Limiter: s.name, Err: err}
}

// State is the shared view of key, for dashboards and tests: Remaining,
// Limit, Reset and BlockedUntil (times on this process's clock), and Known
// when the view holds figures whose window has not passed. Updated,
// InFlight, Window and Probing are the guard's to tell, and are zero.
func (s *SharedQuota) State(ctx context.Context, key string) (quota.State, error) {
	var r []int64
	err := s.call.do(ctx, metrics.OpQuotaRead, s.key(key), func(ctx context.Context) error {
		var err error
		r, err = quotaReadScript.Run(ctx, s.call.client, []string{s.key(key)}).Int64Slice()
		if err == nil && len(r) != 5 {
			err = fmt.Errorf("fleet: quota read script answered %d values, want 5", len(r))
		}
		return err
	})
	if err != nil {
		return quota.State{}, err
	}
	now := time.Now()
	st := quota.State{Known: r[0] == 1, Remaining: r[1], Limit: r[2]}
	if r[3] > 0 {
		st.Reset = now.Add(time.Duration(r[3]) * time.Microsecond)
	}
	if r[4] > 0 {
		st.BlockedUntil = now.Add(time.Duration(r[4]) * time.Microsecond)
	}
	return st, nil
}
