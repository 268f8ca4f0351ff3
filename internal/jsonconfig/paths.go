package jsonconfig

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// Field is a key encoding/json reads into a struct, and the index path of
// the Go field it reads into (reflect.Value.FieldByIndex).
type Field struct {
	Name  string
	Index []int
}

// Fields lists the keys encoding/json reads into struct type t: the
// exported fields by their tag's name or their own, "-" left out, and the
// fields of embedded structs without a tag name as if they were t's.
func Fields(t reflect.Type) []Field {
	var fields []Field
	for f := range t.Fields() {
		name, inline := key(f)
		switch {
		case inline:
			for _, inner := range Fields(indirect(f.Type)) {
				inner.Index = append([]int{f.Index[0]}, inner.Index...)
				fields = append(fields, inner)
			}
		case name != "-" && f.IsExported():
			fields = append(fields, Field{name, f.Index})
		}
	}
	return fields
}

// key is the key encoding/json reads f from: its tag's name, else its own;
// "-" for none. inline is true for an embedded struct without a tag name,
// whose fields encoding/json reads as if they were its parent's.
func key(f reflect.StructField) (name string, inline bool) {
	name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name, f.Anonymous && indirect(f.Type).Kind() == reflect.Struct
	}
	return name, false
}

func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// findField is the field encoding/json decodes key into: the one of that
// name, else one whose name differs from it only in case.
func findField(fields []Field, key string) *Field {
	if i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == key }); i >= 0 {
		return &fields[i]
	}
	if i := slices.IndexFunc(fields, func(f Field) bool { return strings.EqualFold(f.Name, key) }); i >= 0 {
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

func names(fields []Field) string {
	ns := make([]string, len(fields))
	for i, f := range fields {
		ns[i] = f.Name
	}
	slices.Sort(ns)
	return strings.Join(ns, ", ")
}

// Within reports whether path is at, inside or around a place one of the
// problems names. A Validate problem there is most likely one Decode
// already reported: what did not decode is missing or zero.
func Within(path string, problems []Problem) bool {
	return slices.ContainsFunc(problems, func(p Problem) bool { return related(path, p.Path) })
}

// related reports whether one path is the other or lies inside it.
func related(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return strings.HasPrefix(b, a) && (len(a) == len(b) || b[len(a)] == '.' || b[len(a)] == '[')
}

// goNames matches what may be a Go field path in a problem's text.
var goNames = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)*\b`)

// Rename spells a problem that a Validate method names in Go as the JSON of
// struct type t does. field, a Go field path from t ("PerWindow.Window"),
// becomes its JSON path under prefix (`limiters["a"].perWindow.window`);
// the Go field names in want, and in value when it is a []string of them,
// are spelled as JSON keys too. What names no field of t is left as it is.
func Rename(prefix string, t reflect.Type, field string, value any, want string) (string, any, string) {
	jf, parent, _ := jsonPath(t, field)
	spell := func(s string) string {
		// A name in want is most likely a sibling of the field.
		if p, _, ok := jsonPath(parent, s); ok && p != "" {
			return p
		}
		if p, _, ok := jsonPath(t, s); ok && p != "" {
			return p
		}
		return s
	}
	if names, ok := value.([]string); ok {
		js := make([]string, len(names))
		for i, n := range names {
			js[i] = spell(n)
		}
		value = js
	}
	return join(prefix, jf), value, goNames.ReplaceAllStringFunc(want, spell)
}

// jsonPath is the dotted Go field path goPath of struct type t as the JSON
// spells it, an embedded struct adding no step; the type that holds the
// last field; and whether every step was a field JSON reads. A step that is
// not ends the translation: it and the rest are kept as they are.
func jsonPath(t reflect.Type, goPath string) (path string, parent reflect.Type, ok bool) {
	parent = t
	var steps []string
	for rest := goPath; rest != ""; {
		goName, after, _ := strings.Cut(rest, ".")
		t = indirect(t)
		var f reflect.StructField
		found := t.Kind() == reflect.Struct
		if found {
			f, found = t.FieldByName(goName)
		}
		name, inline := key(f)
		if !found || !(f.IsExported() || inline) || name == "-" {
			return strings.Join(append(steps, rest), "."), parent, false
		}
		if !inline {
			steps = append(steps, name)
		}
		parent, t, rest = t, f.Type, after
	}
	return strings.Join(steps, "."), parent, true
}
