package jsonconfig

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
)

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
		name, inline := "", false
		if found {
			name, _, inline = key(f)
		}
		if name == "" && !inline {
			return strings.Join(append(steps, rest), "."), parent, false
		}
		if !inline {
			steps = append(steps, name)
		}
		parent, t, rest = t, f.Type, after
	}
	return strings.Join(steps, "."), parent, true
}

// FieldType is the type of the field at the dotted Go field path goPath
// of struct type t, pointers followed, or nil when goPath names no field of
// t.
func FieldType(t reflect.Type, goPath string) reflect.Type {
	for rest := goPath; rest != ""; {
		goName, after, _ := strings.Cut(rest, ".")
		t = indirect(t)
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := t.FieldByName(goName)
		if !ok {
			return nil
		}
		t, rest = f.Type, after
	}
	return t
}
