package limit

import (
	"context"
	"errors"
	"fmt"
)

// A Priority is how much a request matters against others on the same
// limiter: Critical work a person waits for, Default work, and Background
// work nobody waits for. The zero Priority is Default, so a request that
// names none behaves exactly as one before priorities existed.
//
// A limiter reads the priority only when a request cannot go at once: a
// queue serves its waiters in order of priority, first come first served
// within a level, with a share for every level that waits, and a full
// queue refuses its lowest waiters to make room for a higher newcomer.
// A limiter without a queue never reads it.
//
// The share is stride scheduling: while levels wait, they are served 16 : 4
// : 1 in units (critical, default, background), and a newcomer of a higher
// level passes the lower waiters whose turn is later than its own. That
// bounds starvation: a waiter of cost c with u units of its own level ahead
// of it is passed by at most 16·(u+c) critical units and 4·(u+c) default
// ones if it is background work, by at most 4·(u+c) critical units if it is
// default work. A critical request that finds a queue of background work
// passes nearly all of it.
//
// Shedding: when a queue is full, a newcomer refuses waiters of levels below
// its own to make room, the lowest level first and the latest within it,
// so that those who have waited longest keep their place; each is refused
// with a *RateLimitedError whose Reason is telemetry.ReasonShed. A
// newcomer finding nothing below it to refuse is refused itself
// (telemetry.ReasonQueueFull). In AdaptiveRate, a newcomer whose wait would
// pass its context's deadline refuses the waiters of lower levels that the
// share of each level let in ahead of it, the lowest level first and the
// nearest ahead within it, as few as make it fit (telemetry.ReasonShed);
// when refusing all of them would not, it is refused itself
// (telemetry.ReasonDeadline) and refuses none.
type Priority int8

// The three levels, lowest first.
const (
	Background Priority = -1
	Default    Priority = 0
	Critical   Priority = 1
)

// String is the level's name: "critical", "default" or "background".
func (p Priority) String() string {
	switch p {
	case Background:
		return "background"
	case Default:
		return "default"
	case Critical:
		return "critical"
	}
	return fmt.Sprintf("Priority(%d)", int8(p))
}

// Validate reports a *PriorityError unless p is one of the three levels.
func (p Priority) Validate() error {
	if p < Background || p > Critical {
		return &PriorityError{Value: p.String()}
	}
	return nil
}

// level is p's index among the levels, 0 for Background up to 2 for
// Critical; p is valid.
func (p Priority) level() int { return int(p) + 1 }

// ParsePriority reads a level's name, as String writes it.
func ParsePriority(s string) (Priority, error) {
	for _, p := range [...]Priority{Critical, Default, Background} {
		if s == p.String() {
			return p, nil
		}
	}
	return Default, &PriorityError{Value: s}
}

// MarshalText writes the level's name; an invalid Priority is an error.
func (p Priority) MarshalText() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return []byte(p.String()), nil
}

// UnmarshalText reads a level's name, as ParsePriority does.
func (p *Priority) UnmarshalText(b []byte) error {
	v, err := ParsePriority(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// ErrPriority is what a *PriorityError matches.
var ErrPriority = errors.New("invalid priority")

// PriorityError says a priority is none of the three levels.
type PriorityError struct {
	// Value is the priority as given: a name, or Priority(n).
	Value string
}

func (e *PriorityError) Error() string {
	return fmt.Sprintf("limit: priority %q is not a level; use critical, default or background", e.Value)
}

// Is makes errors.Is(err, ErrPriority) hold.
func (e *PriorityError) Is(target error) bool { return target == ErrPriority }

type priorityKey struct{}

// WithPriority returns a copy of ctx that carries p: every limiter, the
// quota guard and the HTTP layers read a request's priority from its
// context. A limiter that has to read an invalid p refuses the request
// with a *PriorityError.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityFrom is the priority ctx carries, Default when none.
func PriorityFrom(ctx context.Context) Priority {
	p, _ := ctx.Value(priorityKey{}).(Priority)
	return p
}

// priorityOf is PriorityFrom(ctx) checked, as a limiter that orders its
// waiters reads it.
func priorityOf(ctx context.Context) (Priority, error) {
	p := PriorityFrom(ctx)
	return p, p.Validate()
}
