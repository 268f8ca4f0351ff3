package problems

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/jsonconfig"
)

type inner struct {
	MaxWait int `json:"maxWait"`
	Min     int `json:"min"`
}

type outer struct {
	Name   string           `json:"name"`
	Inner  *inner           `json:"inner"`
	Byname map[string]inner `json:"byName"`
}

func (i *inner) check(l *List) {
	if i.MaxWait < 0 {
		l.Add("MaxWait", i.MaxWait, "at least Min")
	}
}

func init() { Register((*inner).check) }

func errorsOf(err error) []string {
	var out []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !errors.Is(e, headroom.ErrConfig) {
				out = append(out, "not a config error: "+e.Error())
				continue
			}
			out = append(out, e.Error())
		}
	}
	return out
}

// A check is written once and names its fields alone; the List it runs
// under says where they sit and how the user spelled them.
func TestListNamesFieldsWhereTheySit(t *testing.T) {
	bad := &inner{MaxWait: -1}
	g := New("pkg")
	Check(g.At("Inner"), bad)
	Check(g.At("Byname").Entry("a"), bad)
	g.Add("Name", "", "a name")
	j := JSON("pkg", reflect.TypeFor[outer](), nil)
	Check(j.At("Inner"), bad)
	Check(j.At("Byname").Entry("a"), bad)
	j.Add("Name", "", "a name")
	want := []string{
		"pkg: Inner.MaxWait = -1: want at least Min",
		`pkg: Byname["a"].MaxWait = -1: want at least Min`,
		"pkg: Name = : want a name",
	}
	if d := cmp.Diff(want, errorsOf(g.Err())); d != "" {
		t.Errorf("in Go (-want +got):\n%s", d)
	}
	want = []string{
		"pkg: inner.maxWait = -1: want at least min",
		`pkg: byName["a"].maxWait = -1: want at least min`,
		"pkg: name = : want a name",
	}
	if d := cmp.Diff(want, errorsOf(j.Err())); d != "" {
		t.Errorf("in JSON (-want +got):\n%s", d)
	}
}

// What did not decode is reported once, by Decode, and not again by a
// check that finds it missing.
func TestJSONListSkipsWhatDidNotDecode(t *testing.T) {
	undecoded := []jsonconfig.Problem{{Path: "inner", Value: "1", Want: "an object"}}
	l := JSON("pkg", reflect.TypeFor[outer](), undecoded)
	Check(l.At("Inner"), &inner{MaxWait: -1})
	l.Add("Name", "", "a name")
	want := []string{"pkg: inner = 1: want an object", "pkg: name = : want a name"}
	if d := cmp.Diff(want, errorsOf(l.Err())); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if l := New("pkg"); l.Err() != nil || l.Len() != 0 {
		t.Errorf("an empty List: %v, %d", l.Err(), l.Len())
	}
}
