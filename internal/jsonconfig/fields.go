package jsonconfig

import (
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// Field is a key encoding/json reads into a struct, and the index path of
// the Go field it reads into (reflect.Value.FieldByIndex).
type Field struct {
	Name  string
	Index []int
	// Quoted is set for a field whose ",string" option encoding/json
	// honours (on a bool, number or string): it reads the value from
	// inside a JSON string. Decode does not read such a field.
	Quoted bool
	tagged bool // named by its tag: it beats an untagged field at its depth
}

// Fields lists the keys encoding/json reads into struct type t, in the
// order of their index paths, found as encoding/json finds them: the
// exported fields, by their tag's name when it is a valid one, else their
// own, a tag "-" left out; and the fields of an embedded struct, or pointer
// to one, exported or not, without a tag name, as if they were t's. Of the
// fields of one name, the shallowest wins, and of those as shallow the one
// named by its tag; a name with no one such field is left out. An embedded
// type is looked into at the shallowest depth it is embedded at, once there
// however often it is embedded at that depth, and not deeper.
func Fields(t reflect.Type) []Field {
	type embedded struct {
		t     reflect.Type
		index []int
	}
	var found []Field
	visited := map[reflect.Type]bool{}
	next, nextCount := []embedded{{t: t}}, map[reflect.Type]int{}
	for len(next) > 0 {
		current, count := next, nextCount
		next, nextCount = nil, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.t] {
				continue
			}
			visited[e.t] = true
			for f := range e.t.Fields() {
				name, tagged, inline := key(f)
				index := append(e.index[:len(e.index):len(e.index)], f.Index[0])
				switch {
				case inline:
					ft := indirect(f.Type)
					if nextCount[ft]++; nextCount[ft] == 1 {
						next = append(next, embedded{ft, index})
					}
				case name != "":
					field := Field{Name: name, Index: index, Quoted: quoted(f), tagged: tagged}
					found = append(found, field)
					if count[e.t] > 1 {
						// The type is embedded twice at this depth: each of
						// its fields is, and is ambiguous.
						found = append(found, field)
					}
				}
			}
		}
	}
	var fields []Field
	for i := range found {
		if dominant(found, i) {
			fields = append(fields, found[i])
		}
	}
	slices.SortFunc(fields, func(a, b Field) int { return slices.Compare(a.Index, b.Index) })
	return fields
}

// dominant reports whether found[i] is the field its name reads into: no
// other of the name is shallower, or as shallow and named by its tag, or
// as shallow and as tagged as it.
func dominant(found []Field, i int) bool {
	f := found[i]
	for j, g := range found {
		if j == i || g.Name != f.Name {
			continue
		}
		if len(g.Index) < len(f.Index) || len(g.Index) == len(f.Index) && (g.tagged || !f.tagged) {
			return false
		}
	}
	return true
}

// key is the key encoding/json reads f from: its tag's name (tagged), else
// its own; "" for none (an unexported field, an embedded one of an
// unexported type that is not a struct, a tag "-"). inline is set instead
// for an embedded struct, or pointer to one, without a tag name, whose
// fields encoding/json reads as if they were its parent's.
func key(f reflect.StructField) (name string, tagged, inline bool) {
	ft := indirect(f.Type)
	if !f.IsExported() && !(f.Anonymous && ft.Kind() == reflect.Struct) {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	if name, _, _ = strings.Cut(tag, ","); validTag(name) {
		return name, true, false
	}
	if f.Anonymous && ft.Kind() == reflect.Struct {
		return "", false, true
	}
	return f.Name, false, false
}

// validTag reports whether encoding/json takes name from a tag as a key;
// it reads a field with any other by its Go name.
func validTag(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}

// quoted reports whether encoding/json reads f from inside a JSON string:
// its tag has the ",string" option, and it is a bool, a number or a string,
// or an unnamed pointer to one.
func quoted(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if !slices.Contains(strings.Split(opts, ","), "string") {
		return false
	}
	ft := f.Type
	if ft.Name() == "" && ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	switch ft.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// indirect is t without its pointers. An embedded field's type is a struct
// or a pointer to one at most.
func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// findField is the field encoding/json decodes key into: the one of that
// name, else the first whose name differs from it only in case.
func findField(fields []Field, key string) *Field {
	if i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == key }); i >= 0 {
		return &fields[i]
	}
	return nil
}

// caseOf is the field name key spells in another case, "" if none: a key
// that encoding/json would read, but a configuration must spell exactly.
func caseOf(fields []Field, key string) string {
	if i := slices.IndexFunc(fields, func(f Field) bool { return strings.EqualFold(f.Name, key) }); i >= 0 {
		return fields[i].Name
	}
	return ""
}

// fieldAlloc is v's field at index, making the embedded structs on the way
// that are nil pointers. When one of those is an unexported field, which
// cannot be set (nor can encoding/json set it), blocked is the struct type
// it points to, and field is not valid.
func fieldAlloc(v reflect.Value, index []int) (field reflect.Value, blocked reflect.Type) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, v.Type().Elem()
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

func names(fields []Field) string {
	ns := make([]string, len(fields))
	for i, f := range fields {
		ns[i] = f.Name
	}
	slices.Sort(ns)
	return strings.Join(ns, ", ")
}
