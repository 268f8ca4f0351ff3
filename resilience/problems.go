package resilience

import (
	"errors"

	"github.com/headroom-go/headroom"
)

// problems collects what is wrong with a configuration, to report every
// problem at once.
type problems struct {
	prefix string // put before each field: "Breaker."
	errs   []error
}

// add records a problem with field, whose value is v, when wrong holds.
func (p *problems) add(wrong bool, field string, v any, want string) {
	if wrong {
		p.errs = append(p.errs, &headroom.ConfigError{Package: "resilience", Field: p.prefix + field, Value: v, Want: want})
	}
}

// err is the problems joined (errors.Join), or nil.
func (p *problems) err() error { return errors.Join(p.errs...) }
