package adaptive

import (
	"errors"

	"github.com/headroom-go/headroom"
)

// problemsOf lists the *headroom.ConfigError problems in err, as Validate
// joins them.
func problemsOf(err error) []*headroom.ConfigError {
	var ps []*headroom.ConfigError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			var p *headroom.ConfigError
			if errors.As(e, &p) {
				ps = append(ps, p)
			}
		}
	}
	return ps
}
