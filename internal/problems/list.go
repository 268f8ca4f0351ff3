package problems

import (
	"errors"
	"reflect"
	"strconv"
	"sync"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/jsonconfig"
)

// A List collects the problems with one configuration. The zero List is
// not usable; make one with New or JSON.
type List struct {
	pkg    string
	prefix string       // the path of the setting this List checks
	json   reflect.Type // the setting's type when fields are spelled as its JSON; nil for Go names
	skip   []jsonconfig.Problem
	errs   *[]error
}

// New returns a List of package pkg ("limit") whose fields are Go field
// paths.
func New(pkg string) *List { return &List{pkg: pkg, errs: new([]error)} }

// JSON returns a List of package pkg whose fields are spelled as the JSON of
// struct type t reads them. It starts with the problems Decode found
// (undecoded), each a *headroom.ConfigError at its path, and adds no problem
// at, inside or around one of those places: what did not decode is missing
// or zero, and was reported once already.
func JSON(pkg string, t reflect.Type, undecoded []jsonconfig.Problem) *List {
	l := &List{pkg: pkg, json: t, skip: undecoded, errs: new([]error)}
	for _, p := range undecoded {
		*l.errs = append(*l.errs, &headroom.ConfigError{Package: pkg, Field: p.Path, Value: p.Value, Want: p.Want})
	}
	return l
}

// Add records a problem: field (a Go field path under the List's setting,
// "PerWindow.Window") had value, and want says what would be right. In a
// JSON List the field, the Go field names in want and a value that lists
// field names are spelled as the JSON does.
func (l *List) Add(field string, value any, want string) {
	f := join(l.prefix, field)
	if l.json != nil {
		f, value, want = jsonconfig.Rename(l.prefix, l.json, field, value, want)
	}
	if jsonconfig.Within(f, l.skip) {
		return
	}
	*l.errs = append(*l.errs, &headroom.ConfigError{Package: l.pkg, Field: f, Value: value, Want: want})
}

// Error records a problem that is an error already (a limiter's
// constructor's, say), as it is.
func (l *List) Error(err error) {
	if err != nil {
		*l.errs = append(*l.errs, err)
	}
}

// At is the List of the setting at field, a Go field path under l's
// setting: its problems go into l, their fields under field.
func (l *List) At(field string) *List {
	sub := *l
	if l.json == nil {
		sub.prefix = join(l.prefix, field)
		return &sub
	}
	sub.prefix, _, _ = jsonconfig.Rename(l.prefix, l.json, field, nil, "")
	sub.json = jsonconfig.FieldType(l.json, field)
	if sub.json == nil {
		sub.json = reflect.TypeFor[struct{}]()
	}
	return &sub
}

// Entry is the List of the entry key of the map l checks.
func (l *List) Entry(key string) *List {
	sub := *l
	sub.prefix = l.prefix + "[" + strconv.Quote(key) + "]"
	if l.json != nil {
		t := l.json
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Map {
			sub.json = t.Elem()
		}
	}
	return &sub
}

// Err is every problem recorded, joined with errors.Join; nil when there
// are none.
func (l *List) Err() error { return errors.Join(*l.errs...) }

// Len is how many problems are recorded.
func (l *List) Len() int { return len(*l.errs) }

// join is the path of field inside prefix.
func join(prefix, field string) string {
	if prefix == "" || field == "" {
		return prefix + field
	}
	return prefix + "." + field
}

// checks holds the registered checks, by the type they check.
var checks sync.Map // reflect.Type → func(any, *List)

// Register makes check the check of options type T, for Check to run. A
// package registers the checks of its options types in an init function.
func Register[T any](check func(*T, *List)) {
	checks.Store(reflect.TypeFor[T](), func(v any, l *List) { check(v.(*T), l) })
}

// Check runs the registered check of T on v under l. It panics when T has
// none: that is a mistake of this module's, never a user's.
func Check[T any](l *List, v *T) {
	c, ok := checks.Load(reflect.TypeFor[T]())
	if !ok {
		panic("problems: no check registered for " + reflect.TypeFor[T]().String())
	}
	c.(func(any, *List))(v, l)
}
