package httpx

import (
	"reflect"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/jsonconfig"
)

// problemField is the JSON path a problem names, "" if none.
func problemField(e error) string {
	if pe, ok := e.(*headroom.ConfigError); ok {
		return pe.Field
	}
	return ""
}

// renamed returns the problems in err, each *headroom.ConfigError with its Field under prefix and, like the field
// names in its Want and its Value, spelled as in the JSON of type t, whose
// Go fields the error names.
func renamed(prefix string, t reflect.Type, err error) []error {
	list := flatten(err)
	for _, e := range list {
		if oe, ok := e.(*headroom.ConfigError); ok {
			oe.Package = "httpx"
			oe.Field, oe.Value, oe.Want = jsonconfig.Rename(prefix, t, oe.Field, oe.Value, oe.Want)
		}
	}
	return list
}
