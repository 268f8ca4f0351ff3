package limit

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/headroom-go/headroom"
)

// ParseAdaptiveRateConfig lists every problem at once, each an
// *headroom.ConfigError at its JSON path with the "limit: " prefix once: unknown
// fields and type errors in key order, then what Validate finds in the
// rest, spelled as the JSON is.
func TestParseAdaptiveRateConfigListsEveryProblem(t *testing.T) {
	for _, c := range []struct {
		json string
		want []string
	}{
		{`{"limiters":{"a":{"controler":"cubic","maxUnitsPerMinute":-5},"b":{"burst":"-1s"}}}`, []string{
			`limit: limiters["a"].controler = an unknown field: want one of aimd, burst, controller, cubic, decreaseCooldown, disabled, initialUnitsPerMinute, instances, maxPause, maxUnitsPerMinute, maxWait, minUnitsPerMinute, publishedLimitFraction, queueLimit`,
			`limit: limiters["a"].maxUnitsPerMinute = -5: want a rate above 0 units per minute`,
			`limit: limiters["b"].burst = -1s: want a duration above 0, such as "10s"`,
		}},
		{`{"limiters":{"a":{"maxWait":60,"burst":"soon","queueLimit":"x","aimd":{"step":1}},"b":[]},"limit":1}`, []string{
			`limit: limit = an unknown field: want one of limiters`,
			`limit: limiters["a"].aimd.step = an unknown field: want one of decreaseFactor, increaseInterval, increaseStep`,
			`limit: limiters["a"].burst = "soon": want a duration string such as "30s"`,
			`limit: limiters["a"].maxWait = 60: want a duration string such as "30s"`,
			`limit: limiters["a"].queueLimit = "x": want a whole number`,
			`limit: limiters["b"] = []: want an object`,
		}},
		// Validate's wants name the other settings as the JSON does.
		{`{"limiters":{"a":{"minUnitsPerMinute":60,"maxUnitsPerMinute":30,"controller":"aimd","cubic":{}}}}`, []string{
			`limit: limiters["a"].cubic = set: want options only with controller "cubic"`,
			`limit: limiters["a"].minUnitsPerMinute = 60: want at most maxUnitsPerMinute (30)`,
		}},
		{`{"limiters":[]}`, []string{`limit: limiters = []: want an object`}},
		{`[]`, []string{`limit: configuration = []: want an object`}},
		{"{\"limiters\":\n {\"a\":{},}}", []string{
			`limit: line 2, column 10 = invalid character '}' looking for beginning of object key string: want a JSON object`}},
		{`{"limiters":{"a":{}}} x`, []string{`limit: line 1, column 23 = data after the configuration: want one JSON object`}},
	} {
		cfg, err := ParseAdaptiveRateConfig([]byte(c.json))
		var got []string
		for _, e := range unjoin(err) {
			if _, ok := errors.AsType[*headroom.ConfigError](e); !ok {
				t.Errorf("%s: %T is not an *headroom.ConfigError", c.json, e)
			}
			got = append(got, e.Error())
		}
		if d := cmp.Diff(c.want, got); d != "" || cfg != nil {
			t.Errorf("%s: config %v, problems (-want +got):\n%s", c.json, cfg, d)
		}
	}
}

// Validate names each limiter's settings by JSON path, as ParseAdaptiveRateConfig does.
func TestAdaptiveRateConfigValidateJSONNames(t *testing.T) {
	c := AdaptiveRateConfig{Limiters: map[string]AdaptiveRateOptions{"a": {MaxUnitsPerMinute: -5, AIMD: &AIMDOptions{DecreaseFactor: 2}}}}
	if d := cmp.Diff([]string{`limiters["a"].maxUnitsPerMinute`, `limiters["a"].aimd.decreaseFactor`}, problems(c.Validate())); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
