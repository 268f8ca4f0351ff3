package headroom

import (
	"encoding/json"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as a string such as
// "1m" or "250ms" (time.ParseDuration's form). A bare number is refused, so
// that "60" is never silently 60 nanoseconds.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string. What is not one is refused with a
// *ConfigError saying what is wanted, which the configuration parsers of
// this module report at the value's JSON path
// (`resilience.timeout = 30: want a duration string such as "30s"`).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	err := json.Unmarshal(b, &s)
	if err == nil {
		var v time.Duration
		if v, err = time.ParseDuration(s); err == nil {
			*d = Duration(v)
			return nil
		}
	}
	return &ConfigError{Package: "headroom", Field: "Duration", Value: string(b), Want: `a duration string such as "30s"`}
}

func (d Duration) String() string { return time.Duration(d).String() }
