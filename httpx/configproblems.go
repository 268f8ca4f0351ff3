package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/resilience"
)

// syntaxError is the problem of data that is not one well-formed JSON
// value, at the line and column where it goes wrong.
func syntaxError(data []byte, err error) error {
	at, msg := len(data), err.Error()
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		at = int(se.Offset) - 1
	case err == io.ErrUnexpectedEOF:
		msg = "unexpected end of JSON input"
	case err == io.EOF:
		return &ConfigError{Field: "configuration", Value: "empty", Want: "a JSON object"}
	}
	return &ConfigError{Field: position(data, at), Value: msg, Want: "a JSON object"}
}

// position is "line L, column C" of byte offset at in data, counted from 1.
func position(data []byte, at int) string {
	at = max(min(at, len(data)), 0)
	line := 1 + bytes.Count(data[:at], []byte("\n"))
	col := at - bytes.LastIndexByte(data[:at], '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

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

// within reports whether path is at, inside or around a place one of the
// problems names.
func within(path string, problems []error) bool {
	for _, p := range problems {
		f := problemField(p)
		if related(path, f) {
			return true
		}
	}
	return false
}

// related reports whether one JSON path is the other or lies inside it.
func related(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return strings.HasPrefix(b, a) && (len(a) == len(b) || b[len(a)] == '.' || b[len(a)] == '[')
}

// renamed returns the problems in err, each *limit.OptionError and
// *resilience.OptionError with its Field under prefix and, like the field
// names in its Want and its Value, spelled as in the JSON of type t, whose
// Go fields the error names.
func renamed(prefix string, t reflect.Type, err error) []error {
	list := flatten(err)
	out := make([]error, 0, len(list))
	for _, e := range list {
		switch oe := e.(type) {
		case *limit.OptionError:
			c := *oe
			c.Field, c.Value, c.Want = rename(prefix, t, c.Field, c.Value, c.Want)
			e = &c
		case *resilience.OptionError:
			c := *oe
			c.Field, c.Value, c.Want = rename(prefix, t, c.Field, c.Value, c.Want)
			e = &c
		}
		out = append(out, e)
	}
	return out
}

// goNames matches what may be a Go field path in an option error's text.
var goNames = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)*\b`)

// rename spells an option error's field, value and want as the JSON of t
// does.
func rename(prefix string, t reflect.Type, field string, value any, want string) (string, any, string) {
	jf, parent, _ := jsonPath(t, field)
	if jf != "" {
		field = prefix + "." + jf
	} else {
		field = prefix
	}
	spell := func(s string) string {
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
	return field, value, goNames.ReplaceAllStringFunc(want, spell)
}

// jsonPath is the dotted Go field path goPath of struct type t as the JSON
// spells it, an embedded struct adding no step; the type that holds the
// last field; and whether every step was a field. A step that is no field
// ends the translation: it and the rest are kept as they are.
func jsonPath(t reflect.Type, goPath string) (path string, parent reflect.Type, ok bool) {
	parent = t
	var steps []string
	rest := goPath
	for rest != "" {
		step, after, _ := strings.Cut(rest, ".")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			steps = append(steps, rest)
			return strings.Join(steps, "."), parent, false
		}
		f, found := t.FieldByName(step)
		if !found || !f.IsExported() {
			steps = append(steps, rest)
			return strings.Join(steps, "."), parent, false
		}
		parent = t
		if !f.Anonymous {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			steps = append(steps, name)
		}
		t, rest = f.Type, after
	}
	return strings.Join(steps, "."), parent, true
}
