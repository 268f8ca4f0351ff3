package httpx

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// unknownFields returns a *ConfigError for every object key in data that
// decoding into a value of type t would ignore, in path order. The decoder's
// DisallowUnknownFields stops at the first; this lists them all, so that a
// configuration's author fixes every typo in one pass. data must already
// have decoded into t: its shape then matches t's, and what cannot be read
// as an object or an array here is a null or a leaf.
func unknownFields(path string, data json.RawMessage, t reflect.Type) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // reads itself, unknown keys included
	}
	var errs []error
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return nil
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(obj) {
			at := k
			if path != "" {
				at = path + "." + k
			}
			// encoding/json matches keys to fields without regard to case.
			i := slices.IndexFunc(fields, func(f jsonField) bool { return strings.EqualFold(f.name, k) })
			if i < 0 {
				errs = append(errs, &ConfigError{Field: at, Value: "an unknown field", Want: "one of " + fieldNames(fields)})
				continue
			}
			errs = append(errs, unknownFields(at, obj[k], fields[i].typ)...)
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return nil
		}
		for _, k := range sortedKeys(obj) {
			errs = append(errs, unknownFields(fmt.Sprintf("%s[%q]", path, k), obj[k], t.Elem())...)
		}
	case reflect.Slice, reflect.Array:
		var list []json.RawMessage
		if json.Unmarshal(data, &list) != nil {
			return nil
		}
		for i, v := range list {
			errs = append(errs, unknownFields(path+"["+strconv.Itoa(i)+"]", v, t.Elem())...)
		}
	}
	return errs
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// jsonField is a key encoding/json reads into a struct, and its field's type.
type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields lists the keys encoding/json reads into struct type t: the
// exported fields by their tag's name or their own, "-" left out, and the
// fields of embedded structs without a tag name as if they were t's.
func jsonFields(t reflect.Type) []jsonField {
	var fields []jsonField
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				fields = append(fields, jsonFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, jsonField{name, f.Type})
	}
	return fields
}

func fieldNames(fields []jsonField) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
