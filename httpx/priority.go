package httpx

import (
	"net/http"

	"github.com/headroom-go/headroom/limit"
)

// WithPriority gives each request the priority f returns: every layer
// (the limiters, the quota guard) reads it from the request's context, as
// limit.WithPriority puts it there. Without this option a request's
// priority is the one its context carries already, Default when none. f
// runs once per request, before the outermost layer; a priority that is
// none of the three levels is refused by the first layer that has to read
// it, with a *limit.PriorityError.
func WithPriority(f func(*http.Request) limit.Priority) Option {
	return func(b *builder) { b.priority = f }
}

// priorityLayer puts the priority of its function into each request's
// context.
type priorityLayer struct {
	next     http.RoundTripper
	priority func(*http.Request) limit.Priority
}

func (l *priorityLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := limit.WithPriority(req.Context(), l.priority(req))
	return l.next.RoundTrip(req.WithContext(ctx))
}
