package limit

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/jsonconfig"
)

// AdaptiveRateConfig is a set of named adaptive rate limiters, as read from
// JSON:
//
//	{"limiters": {"orders-api": {"controller": "cubic", "maxUnitsPerMinute": 2700}}}
//
// Each entry is an AdaptiveRateOptions; its name becomes the limiter's
// name. Durations are strings such as "10s".
type AdaptiveRateConfig struct {
	Limiters map[string]AdaptiveRateOptions `json:"limiters"`
}

// ParseAdaptiveRateConfig reads an AdaptiveRateConfig from JSON and
// validates it. Every problem is listed at once (errors.Join), each an
// *headroom.ConfigError at its JSON path (`limiters["a"].maxWait`): an unknown
// field, a value of the wrong type (a bare-number duration among them), and
// what Validate finds in the limiters that did decode. Only malformed JSON
// and data after the object are reported alone, at their line and column.
func ParseAdaptiveRateConfig(data []byte) (*AdaptiveRateConfig, error) {
	var c AdaptiveRateConfig
	if err := parseJSON(data, &c, c.Validate); err != nil {
		return nil, err
	}
	return &c, nil
}

// names returns the limiters' names, sorted, so that errors come in a
// stable order.
func (c *AdaptiveRateConfig) names() []string {
	names := make([]string, 0, len(c.Limiters))
	for n := range c.Limiters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Validate returns every problem with every limiter at once, joined with
// errors.Join; each is an *headroom.ConfigError whose Field is the JSON path of the
// setting (`limiters["name"].maxUnitsPerMinute`), and whose Want names
// other settings the same way.
func (c *AdaptiveRateConfig) Validate() error {
	var errs []error
	if len(c.Limiters) == 0 {
		errs = append(errs, &headroom.ConfigError{Package: "limit", Field: "limiters", Value: "none", Want: "at least one named limiter"})
	}
	for _, name := range c.names() {
		o := c.Limiters[name]
		if strings.TrimSpace(name) == "" {
			errs = append(errs, &headroom.ConfigError{Package: "limit", Field: "limiters", Value: fmt.Sprintf("%q", name), Want: "a name that is not blank"})
		}
		for _, err := range o.validate() {
			if oe, ok := err.(*headroom.ConfigError); ok {
				oe.Field, oe.Value, oe.Want = jsonconfig.Rename(fmt.Sprintf("limiters[%q]", name),
					reflect.TypeFor[AdaptiveRateOptions](), strings.TrimPrefix(oe.Field, "AdaptiveRate."), oe.Value, oe.Want)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Build returns the limiters by name, each named after its entry and
// adjusted by opts (WithMeterProvider, say), or Validate's error.
func (c *AdaptiveRateConfig) Build(opts ...Option) (map[string]*AdaptiveRateLimiter, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m := make(map[string]*AdaptiveRateLimiter, len(c.Limiters))
	for _, name := range c.names() {
		o := c.Limiters[name]
		l, err := AdaptiveRate(o, append(append([]Option(nil), opts...), WithName(name))...)
		if err != nil {
			return nil, err
		}
		m[name] = l
	}
	return m, nil
}
