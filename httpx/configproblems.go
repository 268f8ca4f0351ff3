package httpx

import (
	"reflect"

	"github.com/headroom-go/headroom/internal/jsonconfig"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/resilience"
)

// problemField is the JSON path a problem names, "" if none.
func problemField(e error) string {
	switch pe := e.(type) {
	case *ConfigError:
		return pe.Field
	case *limit.OptionError:
		return pe.Field
	case *resilience.OptionError:
		return pe.Field
	}
	return ""
}

// renamed returns the problems in err, each *limit.OptionError and
// *resilience.OptionError with its Field under prefix and, like the field
// names in its Want and its Value, spelled as in the JSON of type t, whose
// Go fields the error names.
func renamed(prefix string, t reflect.Type, err error) []error {
	list := flatten(err)
	for _, e := range list {
		switch oe := e.(type) {
		case *limit.OptionError:
			oe.Field, oe.Value, oe.Want = jsonconfig.Rename(prefix, t, oe.Field, oe.Value, oe.Want)
		case *resilience.OptionError:
			oe.Field, oe.Value, oe.Want = jsonconfig.Rename(prefix, t, oe.Field, oe.Value, oe.Want)
		}
	}
	return list
}
