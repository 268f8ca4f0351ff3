package jsonconfig

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/headroom-go/headroom"
)

// Problem is one thing wrong with a document.
type Problem struct {
	Path  string // the JSON path, Root, or "line L, column C" for malformed JSON
	Value string // the value as written (compacted, cut short), or what is wrong
	Want  string // what would be right
}

// Root is the Path of a problem with the document as a whole.
const Root = "configuration"

// Error reads "path = value: want …", without "path = " when Path is "".
// A Problem is an error so that a type reading itself can say what it
// wants: when its UnmarshalJSON returns one, or a *headroom.ConfigError,
// wrapped or not, Decode reports that Want at the value's path.
func (p *Problem) Error() string {
	if p.Path == "" {
		return fmt.Sprintf("%s: want %s", p.Value, p.Want)
	}
	return fmt.Sprintf("%s = %s: want %s", p.Path, p.Value, p.Want)
}

// Decode decodes data, one JSON value, into v, a non-nil pointer, as
// encoding/json's Unmarshal would, but reads on past a value of the wrong
// type and an unknown field, so that a configuration's author fixes every
// mistake in one pass. The problems of an object come in the order of its
// keys.
//
// Decode walks structs, maps with string keys, slices and pointers itself,
// and has encoding/json read every other value: a null, a scalar, an
// array, an interface, a map with other keys or with keys that read
// themselves (encoding.TextUnmarshaler), and a value that reads itself
// (json.Unmarshaler, encoding.TextUnmarshaler). It reads an object's key
// into the struct field encoding/json would (Fields): the one of that name,
// else of that name in another case, where embedded structs' fields count
// as their parent's, the shallowest of a name winning, then the one named
// by its tag. It differs from encoding/json in these only:
//   - an unknown field, ambiguous names included, is a problem, not ignored;
//   - a key matches its field exactly: one in another case is a problem;
//   - a key given twice in one object is a problem at its second place,
//     where encoding/json keeps the last value;
//   - a list replaces a slice whole, where encoding/json reads into the
//     elements the slice already has;
//   - a field with the ",string" option is a problem at its key, not read;
//   - a value it cannot set, being reached through an unexported embedded
//     struct, is a problem at its key: a field behind a nil embedded pointer
//     (which encoding/json refuses too), the nil pointer of an embedded field
//     named by its tag, and such a struct given null or reading itself.
//
// read is false when the document could not be read at all: it is empty,
// malformed or followed by more data, or it is not the kind of value v is.
// The one problem then says why, and there is nothing to validate.
func Decode(data []byte, v any) (problems []Problem, read bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return []Problem{syntaxProblem(data, err)}, false
	}
	if at := int(dec.InputOffset()); !isEOF(dec) {
		for at < len(data) && strings.IndexByte(" \t\r\n", data[at]) >= 0 {
			at++
		}
		return []Problem{{Path: position(data, at), Value: "data after the configuration", Want: "one JSON object"}}, false
	}
	problems = decode("", raw, reflect.ValueOf(v).Elem())
	if len(problems) == 1 && problems[0].Path == "" { // the document itself
		problems[0].Path = Root
		return problems, false
	}
	return problems, true
}

func isEOF(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == io.EOF
}

// syntaxProblem is the problem of data that is not one well-formed JSON
// value, at the line and column where it goes wrong.
func syntaxProblem(data []byte, err error) Problem {
	at, msg := len(data), err.Error()
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		at = int(se.Offset) - 1
	case err == io.ErrUnexpectedEOF:
		msg = "unexpected end of JSON input"
	case err == io.EOF:
		return Problem{Path: Root, Value: "empty", Want: "a JSON object"}
	}
	return Problem{Path: position(data, at), Value: msg, Want: "a JSON object"}
}

// position is "line L, column C" of byte offset at in data, counted from 1.
func position(data []byte, at int) string {
	at = max(min(at, len(data)), 0)
	line := 1 + bytes.Count(data[:at], []byte("\n"))
	col := at - bytes.LastIndexByte(data[:at], '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// decode is Decode for the well-formed value data at path: it walks the
// objects, maps and lists itself, so that one bad member does not stop the
// others, and leaves the rest to encoding/json.
func decode(path string, data json.RawMessage, v reflect.Value) []Problem {
	if isNull(data) || readsItself(v.Type()) {
		return leaf(path, data, v)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			if !v.CanSet() {
				return []Problem{unsettable(path, v.Type().Elem())}
			}
			v.Set(reflect.New(v.Type().Elem()))
		}
		return decode(path, data, v.Elem())
	case reflect.Struct:
		return decodeStruct(path, data, v)
	case reflect.Map:
		return decodeMap(path, data, v)
	case reflect.Slice:
		var list []json.RawMessage
		if json.Unmarshal(data, &list) != nil {
			return []Problem{typeProblem(path, data, "a list")}
		}
		s := reflect.MakeSlice(v.Type(), len(list), len(list))
		var problems []Problem
		for i, item := range list {
			problems = append(problems, decode(path+"["+strconv.Itoa(i)+"]", item, s.Index(i))...)
		}
		v.Set(s)
		return problems
	}
	return leaf(path, data, v)
}

// decodeStruct reads the object data into the struct v, member by member.
func decodeStruct(path string, data json.RawMessage, v reflect.Value) []Problem {
	members, ok := objectMembers(data)
	if !ok {
		return []Problem{typeProblem(path, data, "an object")}
	}
	fields := Fields(v.Type())
	var found []keyProblems
	for i, m := range members {
		at := join(path, step(m.key))
		if p, twice := repeated(members, i, at); twice {
			found = append(found, keyProblems{m.key, []Problem{p}})
			continue
		}
		f := findField(fields, m.key)
		if f == nil {
			want := "one of " + names(fields)
			if name := caseOf(fields, m.key); name != "" {
				want = strconv.Quote(name) + ": keys are read exactly, case included"
			}
			found = append(found, keyProblems{m.key, []Problem{{Path: at, Value: "an unknown field", Want: want}}})
			continue
		}
		if f.Quoted {
			found = append(found, keyProblems{m.key, []Problem{{Path: at,
				Value: `a field with the ",string" option`, Want: `a Go field without it: Decode does not read ",string"`}}})
			continue
		}
		fv, blocked := fieldAlloc(v, f.Index)
		if blocked != nil {
			found = append(found, keyProblems{m.key, []Problem{unsettable(at, blocked)}})
			continue
		}
		found = append(found, keyProblems{m.key, decode(at, m.value, fv)})
	}
	return sorted(found)
}

// decodeMap reads the object data into the map v, member by member.
func decodeMap(path string, data json.RawMessage, v reflect.Value) []Problem {
	members, ok := objectMembers(data)
	if !ok {
		return []Problem{typeProblem(path, data, "an object")}
	}
	if kt := v.Type().Key(); kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(textUnmarshalerType) {
		return leaf(path, data, v)
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	var found []keyProblems
	for i, m := range members {
		if p, twice := repeated(members, i, fmt.Sprintf("%s[%q]", path, m.key)); twice {
			found = append(found, keyProblems{m.key, []Problem{p}})
			continue
		}
		// A value that does not decode whole still goes in: a name that
		// refers to it is then not reported as missing besides.
		elem := reflect.New(v.Type().Elem()).Elem()
		found = append(found, keyProblems{m.key, decode(fmt.Sprintf("%s[%q]", path, m.key), m.value, elem)})
		v.SetMapIndex(reflect.ValueOf(m.key).Convert(v.Type().Key()), elem)
	}
	return sorted(found)
}

// repeated reports a key that members[i] gives again after an earlier
// member: encoding/json would silently keep the last value, so that one of
// the two settings its author wrote is lost.
func repeated(members []member, i int, at string) (Problem, bool) {
	for _, m := range members[:i] {
		if m.key == members[i].key {
			return Problem{Path: at, Value: "a key given twice", Want: "each key once"}, true
		}
	}
	return Problem{}, false
}

// leaf decodes data into v with encoding/json itself: a null, a scalar, a
// value that reads itself. The latter's own *Problem says what it wants.
func leaf(path string, data json.RawMessage, v reflect.Value) []Problem {
	if !v.CanInterface() {
		return []Problem{unsettable(path, v.Type())}
	}
	err := json.Unmarshal(data, v.Addr().Interface())
	if err == nil {
		return nil
	}
	if p, ok := errors.AsType[*Problem](err); ok {
		return []Problem{typeProblem(path, data, p.Want)}
	}
	if p, ok := errors.AsType[*headroom.ConfigError](err); ok {
		return []Problem{typeProblem(path, data, p.Want)}
	}
	return []Problem{typeProblem(path, data, want(v.Type()))}
}

// want says what a JSON value for type t looks like.
func want(t reflect.Type) string {
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

// typeProblem is a value that cannot be read as what its place wants.
func typeProblem(path string, data json.RawMessage, want string) Problem {
	return Problem{Path: path, Value: excerpt(data), Want: want}
}

// excerpt is a JSON value as it is written, compacted and cut short.
func excerpt(data json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, data) != nil {
		b.Reset()
		b.Write(data)
	}
	const most = 40
	if r := []rune(b.String()); len(r) > most {
		return string(r[:most]) + "…"
	}
	return b.String()
}

func isNull(data json.RawMessage) bool {
	return string(bytes.TrimSpace(data)) == "null"
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// readsItself reports whether encoding/json has a value of type t read
// itself, from any JSON value (json.Unmarshaler) or from a string
// (encoding.TextUnmarshaler, for which any other JSON is of the wrong type).
func readsItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType)
}

// unsettable is the problem of a value at path that Decode cannot set: one
// reached through an unexported embedded field of struct type t, whose
// reflect.Value is read-only.
func unsettable(path string, t reflect.Type) Problem {
	return Problem{Path: path, Value: fmt.Sprintf("unexported embedded %v, which Decode cannot set", t),
		Want: "an exported embedded type, or a non-nil pointer to it"}
}

// join is the path of step inside path.
func join(path, step string) string {
	if path == "" || step == "" {
		return path + step
	}
	return path + "." + step
}

// step is an object key as a path step: quoted unless it is a plain name,
// so that a key such as "a.b" or "" reads one way only.
func step(key string) string {
	plain := key != "" && !strings.ContainsFunc(key, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
	})
	if plain {
		return key
	}
	return strconv.Quote(key)
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

// keyProblems are the problems found under one key.
type keyProblems struct {
	key      string
	problems []Problem
}

// sorted lists the problems in the order of their keys, stably, so that a
// duplicate key's come in document order.
func sorted(ks []keyProblems) []Problem {
	slices.SortStableFunc(ks, func(a, b keyProblems) int { return strings.Compare(a.key, b.key) })
	var problems []Problem
	for _, k := range ks {
		problems = append(problems, k.problems...)
	}
	return problems
}
