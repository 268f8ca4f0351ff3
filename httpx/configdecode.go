package httpx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/headroom-go/headroom/limit"
)

// decodeAll decodes data into v as encoding/json would, but reads on past a
// problem: a value of the wrong type and an unknown field are each a
// *ConfigError naming the JSON path, and the rest of the document is still
// decoded, so that a configuration's author fixes every mistake in one pass
// and Validate can judge what did decode. data must be syntactically valid
// JSON. The problems of an object come in the order of its keys.
func decodeAll(path string, data json.RawMessage, v reflect.Value) []error {
	if isNull(data) || reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
		return leaf(path, data, v)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return decodeAll(path, data, v.Elem())
	case reflect.Struct:
		members, ok := objectMembers(data)
		if !ok {
			return []error{typeError(path, data, "an object")}
		}
		fields := jsonFields(v.Type())
		var errs []pathErrors
		for _, m := range members {
			at := m.key
			if path != "" {
				at = path + "." + m.key
			}
			f := findField(fields, m.key)
			if f == nil {
				errs = append(errs, pathErrors{m.key, []error{&ConfigError{Field: at, Value: "an unknown field", Want: "one of " + fieldNames(fields)}}})
				continue
			}
			errs = append(errs, pathErrors{m.key, decodeAll(at, m.value, fieldAlloc(v, f.index))})
		}
		return sorted(errs)
	case reflect.Map:
		members, ok := objectMembers(data)
		if !ok {
			return []error{typeError(path, data, "an object")}
		}
		if v.Type().Key().Kind() != reflect.String {
			return leaf(path, data, v)
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		var errs []pathErrors
		for _, m := range members {
			// A value that does not decode whole still goes in: a name that
			// refers to it is then not reported as missing besides.
			elem := reflect.New(v.Type().Elem()).Elem()
			errs = append(errs, pathErrors{m.key, decodeAll(fmt.Sprintf("%s[%q]", path, m.key), m.value, elem)})
			v.SetMapIndex(reflect.ValueOf(m.key).Convert(v.Type().Key()), elem)
		}
		return sorted(errs)
	case reflect.Slice:
		var list []json.RawMessage
		if json.Unmarshal(data, &list) != nil {
			return []error{typeError(path, data, "a list")}
		}
		s := reflect.MakeSlice(v.Type(), len(list), len(list))
		var errs []error
		for i, item := range list {
			errs = append(errs, decodeAll(path+"["+strconv.Itoa(i)+"]", item, s.Index(i))...)
		}
		v.Set(s)
		return errs
	}
	return leaf(path, data, v)
}

// leaf decodes data into v with encoding/json itself: a value that reads
// itself, a null, a scalar.
func leaf(path string, data json.RawMessage, v reflect.Value) []error {
	if err := json.Unmarshal(data, v.Addr().Interface()); err != nil {
		return []error{typeError(path, data, want(v.Type()))}
	}
	return nil
}

// want says what a JSON value for type t looks like.
func want(t reflect.Type) string {
	if t == reflect.TypeFor[limit.Duration]() {
		return `a duration string such as "30s"`
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "a value of type " + t.String()
}

// typeError is a value that cannot be read as what its place wants.
func typeError(path string, data json.RawMessage, want string) error {
	if path == "" {
		path = "configuration"
	}
	return &ConfigError{Field: path, Value: excerpt(data), Want: want}
}

// excerpt is a JSON value as it is written, compacted and cut short.
func excerpt(data json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, data) != nil {
		b.Reset()
		b.Write(data)
	}
	const most = 40
	if b.Len() <= most {
		return b.String()
	}
	r := []rune(b.String())
	if len(r) <= most {
		return string(r)
	}
	return string(r[:most]) + "…"
}

func isNull(data json.RawMessage) bool {
	return string(bytes.TrimSpace(data)) == "null"
}

// member is one key and value of a JSON object.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers lists the members of the object data in document order,
// duplicates included, as encoding/json reads them; false when data is not
// an object.
func objectMembers(data json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var ms []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		ms = append(ms, member{key, v})
	}
	return ms, true
}

// pathErrors are the problems found under one key.
type pathErrors struct {
	key  string
	errs []error
}

// sorted lists the problems in the order of their keys.
func sorted(ps []pathErrors) []error {
	slices.SortStableFunc(ps, func(a, b pathErrors) int { return strings.Compare(a.key, b.key) })
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.errs...)
	}
	return errs
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// jsonField is a key encoding/json reads into a struct: its name, its Go
// field (the Go name and the index path from the struct), and its type.
type jsonField struct {
	name   string
	goName string
	index  []int
	typ    reflect.Type
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
				for _, inner := range jsonFields(ft) {
					inner.index = append([]int{f.Index[0]}, inner.index...)
					fields = append(fields, inner)
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, jsonField{name, f.Name, f.Index, f.Type})
	}
	return fields
}

// findField is the field encoding/json decodes key into: the one of that
// name, else one whose name differs from it only in case.
func findField(fields []jsonField, key string) *jsonField {
	if i := slices.IndexFunc(fields, func(f jsonField) bool { return f.name == key }); i >= 0 {
		return &fields[i]
	}
	if i := slices.IndexFunc(fields, func(f jsonField) bool { return strings.EqualFold(f.name, key) }); i >= 0 {
		return &fields[i]
	}
	return nil
}

// fieldAlloc is v's field at index, making the embedded structs on the way
// that are nil pointers.
func fieldAlloc(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

func fieldNames(fields []jsonField) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
