package adaptive

import (
	"errors"

	"github.com/headroom-go/headroom"
)

// problems collects what is wrong with a configuration, each a
// *headroom.ConfigError of package "adaptive" naming the field.
type problems []*headroom.ConfigError

func (ps *problems) add(field string, value any, want string) {
	*ps = append(*ps, &headroom.ConfigError{Package: "adaptive", Field: field, Value: value, Want: want})
}

// joinProblems is a configuration's problems as one error, joined with
// errors.Join; nil when there are none.
func joinProblems(ps []*headroom.ConfigError) error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errors.Join(errs...)
}
