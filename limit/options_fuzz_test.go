package limit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/headroom-go/headroom"
)

// FuzzOptions decodes any JSON into Options and validates it: nothing
// panics, and whatever validates builds a limiter that grants a free lease.
func FuzzOptions(f *testing.F) {
	for _, seed := range []string{
		`{"permitsPerSecond": 100}`,
		`{"permitsPerSecond": 0.5, "burst": 3, "queueLimit": 2}`,
		`{"perWindow": {"permits": 1000, "window": "1m"}}`,
		`{"perWindow": {"permits": 10, "window": "1s", "segments": 3}, "queueLimit": 5}`,
		`{"concurrency": 20, "name": "db"}`,
		`{"adaptive": {}}`,
		`{"adaptiveRate": {}}`,
		`{"permitsPerSecond": 100, "concurrency": 20}`,
		`{"perWindow": {"permits": -1, "window": "-1s", "segments": -1}}`,
		`{"permitsPerSecond": 1e300}`,
		`{"perWindow": {"permits": 1, "window": "2562047h47m16.854775807s"}}`,
		`{"adaptiveRate": {"maxWait": "2562047h47m16.854775807s", "maxPause": "2562047h47m16.854775807s"}}`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var o Options
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if dec.Decode(&o) != nil {
			return
		}
		if o.Validate() != nil {
			if _, err := New(o); err == nil {
				t.Fatalf("New built what Validate refused: %s", data)
			}
			return
		}
		grantsFreeLease(t, o, data)
	})
}

// grantsFreeLease checks that valid options o, read from data, build a
// limiter that grants a free lease.
func grantsFreeLease(t *testing.T, o Options, data []byte) {
	t.Helper()
	lim, err := New(o)
	if err != nil {
		t.Fatalf("valid options but New failed: %v (%s)", err, data)
	}
	lease, err := lim.AcquireN(context.Background(), 0)
	if err != nil {
		t.Fatalf("a free lease was refused: %v (%s)", err, data)
	}
	lease.Release()
}

// FuzzParseOptions: parsing any input never panics; it returns Options or
// errors, never both; every problem is an *headroom.ConfigError with a Field; and
// what parses builds a limiter that grants a free lease. Its seed corpus is
// in testdata/fuzz/FuzzParseOptions.
func FuzzParseOptions(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseOptions(data)
		if err != nil {
			for _, e := range unjoin(err) {
				var oe *headroom.ConfigError
				if !errors.As(e, &oe) || oe.Field == "" {
					t.Fatalf("problem %v is not an *headroom.ConfigError with a Field (%s)", e, data)
				}
			}
			if o.shapes() != nil || o.PerWindow != nil {
				t.Fatalf("options %+v returned with an error (%s)", o, data)
			}
			return
		}
		grantsFreeLease(t, o, data)
	})
}
