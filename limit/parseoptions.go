package limit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// ParseOptions reads Options from JSON and validates them.
//
// Malformed JSON, a value of the wrong type and data after the object are
// errors on their own: the decoder cannot read on past them. Otherwise every
// unknown field and every problem Validate finds are listed at once, joined
// with errors.Join, unknown fields first. Each is an *OptionError whose
// Field is the JSON path of the setting ("perWindow.window",
// "adaptiveRate.aimd.decreaseFactor"), except a problem with the whole
// object, which Validate reports as "Options". A field encoding/json would
// silently drop, such as "permit" for "permits", is an error, never a
// default in disguise.
func ParseOptions(data []byte) (Options, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var o Options
	if err := dec.Decode(&o); err != nil {
		return Options{}, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Options{}, &OptionError{Field: "(json)", Value: "data after the options", Want: "one JSON object"}
	}
	errs := unknownFields("", data, reflect.TypeFor[Options]())
	for _, err := range unjoinErrors(o.Validate()) {
		if oe, ok := err.(*OptionError); ok {
			oe.Field = jsonPath(oe.Field)
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return Options{}, errors.Join(errs...)
	}
	return o, nil
}

// decodeError turns the decoder's error into an *OptionError: at the JSON
// path of the value for a value of the wrong type, at "(json)" otherwise.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return &OptionError{Field: te.Field, Value: "a JSON " + te.Value, Want: jsonKind(te.Type)}
	}
	return &OptionError{Field: "(json)", Value: err, Want: "one JSON object of limit.Options"}
}

// jsonKind names what JSON decodes into a value of type t.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	default:
		return "an object"
	}
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

// unknownFields returns an *OptionError for every object key in data that
// decoding into a value of type t would ignore, in path order; the
// decoder's DisallowUnknownFields stops at the first. data must already
// have decoded into t: its shape then matches t's, and what cannot be read
// as an object here is a null or a leaf.
func unknownFields(path string, data json.RawMessage, t reflect.Type) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // a leaf, or a type that reads itself (Duration)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fields := jsonFields(t)
	var errs []error
	for _, k := range keys {
		at := k
		if k == "" || strings.ContainsAny(k, ".\" \t\n") {
			at = strconv.Quote(k) // so that the path reads one way
		}
		if path != "" {
			at = path + "." + at
		}
		// encoding/json matches keys to fields without regard to case.
		i := slices.IndexFunc(fields, func(f reflect.StructField) bool { return strings.EqualFold(jsonName(f), k) })
		if i < 0 {
			errs = append(errs, &OptionError{Field: at, Value: "an unknown field", Want: "one of " + fieldNames(fields)})
			continue
		}
		errs = append(errs, unknownFields(at, obj[k], fields[i].Type)...)
	}
	return errs
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// jsonFields lists the fields of struct type t that encoding/json reads:
// exported and not tagged "-". The option types embed nothing.
func jsonFields(t reflect.Type) []reflect.StructField {
	var fields []reflect.StructField
	for f := range t.Fields() {
		if f.IsExported() && jsonName(f) != "-" {
			fields = append(fields, f)
		}
	}
	return fields
}

// jsonName is the key encoding/json reads f from.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

func fieldNames(fields []reflect.StructField) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = jsonName(f)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// jsonPath turns a Field of Validate's, a path of Go field names such as
// "AdaptiveRate.AIMD.DecreaseFactor", into the JSON path of the same
// setting, "adaptiveRate.aimd.decreaseFactor". A field that names no
// setting ("Options", the whole object) is returned as it is.
func jsonPath(field string) string {
	t := reflect.TypeFor[Options]()
	var path []string
	for name := range strings.SplitSeq(field, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return field
		}
		f, ok := t.FieldByName(name)
		if !ok || !f.IsExported() || jsonName(f) == "-" {
			return field
		}
		path = append(path, jsonName(f))
		t = f.Type
	}
	return strings.Join(path, ".")
}
