package limit

import (
	"errors"
	"testing"

	"github.com/headroom-go/headroom"
)

// FuzzAdaptiveRateConfig: decoding and validating any input never panics,
// every problem is an *headroom.ConfigError with a Field, and a config that
// validates always builds.
func FuzzAdaptiveRateConfig(f *testing.F) {
	f.Add([]byte(`{"limiters": {"orders-api": {"controller": "cubic", "maxUnitsPerMinute": 2700}}}`))
	f.Add([]byte(`{"limiters": {"a": {"minUnitsPerMinute": 100, "maxUnitsPerMinute": 100, "initialUnitsPerMinute": 100}}}`))
	f.Add([]byte(`{"limiters": {"a": {"burst": "1ms", "queueLimit": -1, "maxPause": "-1s", "decreaseCooldown": "-1s"}}}`))
	f.Add([]byte(`{"limiters": {"a": {"aimd": {"decreaseFactor": 0.5, "increaseStep": 1e300, "increaseInterval": "1ns"}, "instances": 1000000}}}`))
	f.Add([]byte(`{"limiters": {"a": {"controller": "cubic", "cubic": {"beta": 0.999, "scaleConstant": 1e-300}, "disabled": true}}}`))
	f.Add([]byte(`{"limiters": {"a": {"minUnitsPerMinute": 1e-300, "maxUnitsPerMinute": 1e300}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseAdaptiveRateConfig(data)
		if err != nil {
			for _, e := range unjoin(err) {
				if oe, ok := errors.AsType[*headroom.ConfigError](e); c != nil || !ok || oe.Field == "" {
					t.Fatalf("bad problem %v with config %v", e, c)
				}
			}
			return
		}
		ls, err := c.Build()
		if err != nil {
			t.Fatalf("valid config did not build: %v", err)
		}
		for _, l := range ls {
			if r := l.Rate(); !(r > 0) {
				t.Fatalf("rate %v", r)
			}
			l.Close()
		}
	})
}
