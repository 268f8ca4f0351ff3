package limit

import (
	"reflect"

	"github.com/headroom-go/headroom/internal/jsonconfig"
	"github.com/headroom-go/headroom/internal/problems"
)

// ParseOptions reads Options from JSON and validates them.
//
// Every problem is listed at once, joined with errors.Join, each an
// *headroom.ConfigError whose Field is the JSON path of the setting
// ("perWindow.window", "adaptiveRate.aimd.decreaseFactor"): an unknown
// field, a value of the wrong type (a bare-number duration among them),
// then what Validate finds in the parts that did decode, with the names in
// its Want spelled as the JSON does. A problem with the whole object is
// Validate's "Options". A field encoding/json would silently drop, such as
// "permit" for "permits", is an error, never a default in disguise. Only
// malformed JSON and data after the object are reported alone, at their
// line and column.
func ParseOptions(data []byte) (Options, error) {
	var o Options
	undecoded, read := jsonconfig.Decode(data, &o)
	l := problems.JSON("limit", reflect.TypeFor[Options](), undecoded)
	if read {
		o.check(l)
	}
	if err := l.Err(); err != nil {
		return Options{}, err
	}
	return o, nil
}
