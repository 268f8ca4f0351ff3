package limit

import (
	"errors"
	"reflect"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/jsonconfig"
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
	err := parseJSON(data, &o, func() error {
		errs := unjoinErrors(o.Validate())
		for _, err := range errs {
			if oe, ok := err.(*headroom.ConfigError); ok {
				oe.Field, oe.Value, oe.Want = jsonconfig.Rename("", reflect.TypeFor[Options](), oe.Field, oe.Value, oe.Want)
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return Options{}, err
	}
	return o, nil
}

// parseJSON decodes data into v and, when the document could be read,
// validates what decoded: every problem at once, each an *headroom.ConfigError at
// its JSON path. validate's problems must name their fields by JSON path
// too.
func parseJSON(data []byte, v any, validate func() error) error {
	problems, read := jsonconfig.Decode(data, v)
	var errs []error
	for _, p := range problems {
		errs = append(errs, &headroom.ConfigError{Package: "limit", Field: p.Path, Value: p.Value, Want: p.Want})
	}
	if read {
		for _, err := range unjoinErrors(validate()) {
			// A place that did not decode is reported once: Validate would
			// find it missing or zero besides.
			if oe, ok := err.(*headroom.ConfigError); !ok || !jsonconfig.Within(oe.Field, problems) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func unjoinErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}
