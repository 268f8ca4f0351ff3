package httpx

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/headroom-go/headroom"
)

// FuzzParseConfig feeds ParseConfig arbitrary bytes (seeds in
// testdata/fuzz/FuzzParseConfig). It must not panic; every problem it
// reports must be one of the typed errors the package documents; and a
// configuration it accepts must be valid, hold what encoding/json reads from
// the same bytes, and read back the same from its own JSON.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(sampleConfig))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if c != nil {
				t.Fatalf("a config and an error: %v", err)
			}
			for _, e := range flatten(err) {
				var ce *headroom.ConfigError
				var le *headroom.ConfigError
				var re *headroom.ConfigError
				if !errors.As(e, &ce) && !errors.As(e, &le) && !errors.As(e, &re) {
					t.Fatalf("untyped problem %T: %v", e, e)
				}
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		var std Config
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		if !reflect.DeepEqual(c, &std) {
			t.Fatalf("read %+v; encoding/json reads %+v", c, &std)
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if _, err := ParseConfig(again); err != nil {
			t.Fatalf("its own JSON %s refused: %v", again, err)
		}
	})
}
