package jsonconfig

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// seconds reads itself, as headroom.Duration does, and says what it wants.
type seconds int

func (s *seconds) UnmarshalJSON(b []byte) error {
	if _, err := fmt.Sscanf(string(b), `"%ds"`, (*int)(s)); err != nil {
		return fmt.Errorf("seconds: %w", &Problem{Value: string(b), Want: `seconds such as "30s"`})
	}
	return nil
}

type inner struct {
	Count int     `json:"count"`
	Wait  seconds `json:"wait"`
}

type Shared struct {
	Name string `json:"name"`
}

type doc struct {
	Shared
	Inner   *inner           `json:"inner"`
	Entries map[string]inner `json:"entries"`
	Tags    []string         `json:"tags"`
	Skip    string           `json:"-"`
}

func TestDecodeReadsOn(t *testing.T) {
	var d doc
	problems, read := Decode([]byte(`{
	  "NAME": "x", "zz": 1, "a.b": 2, "Skip": "y",
	  "inner": {"count": "3", "wait": 30},
	  "entries": {"e1": {"count": 1, "wiat": "1s"}, "e2": [], "e3": {"wait": "5s"}},
	  "tags": ["a", 2]}`), &d)
	want := []Problem{
		{"NAME", "an unknown field", `"name": keys are read exactly, case included`},
		{"Skip", "an unknown field", "one of entries, inner, name, tags"},
		{`"a.b"`, "an unknown field", "one of entries, inner, name, tags"},
		{`entries["e1"].wiat`, "an unknown field", "one of count, wait"},
		{`entries["e2"]`, "[]", "an object"},
		{"inner.count", `"3"`, "a whole number"},
		{"inner.wait", "30", `seconds such as "30s"`},
		{"tags[1]", "2", "a string"},
		{"zz", "an unknown field", "one of entries, inner, name, tags"},
	}
	if !reflect.DeepEqual(want, problems) || !read {
		t.Errorf("read %v, problems\n%q\nwant\n%q", read, problems, want)
	}
	// What did decode is in place, for Validate to judge.
	if d.Name != "" || d.Entries["e3"].Wait != 5 || d.Entries["e1"].Count != 1 || len(d.Entries) != 3 || d.Tags[0] != "a" {
		t.Errorf("decoded %+v", d)
	}
}

func TestDecodeUnreadable(t *testing.T) {
	for _, c := range []struct {
		json string
		want Problem
	}{
		{``, Problem{Root, "empty", "a JSON object"}},
		{`[1]`, Problem{Root, "[1]", "an object"}},
		{`{"name": "x"`, Problem{"line 1, column 13", "unexpected end of JSON input", "a JSON object"}},
		{"{\n  \"name\": ,\n}", Problem{"line 2, column 11", "invalid character ',' looking for beginning of value", "a JSON object"}},
		{"{} \n {}", Problem{"line 2, column 2", "data after the configuration", "one JSON object"}},
	} {
		var d doc
		problems, read := Decode([]byte(c.json), &d)
		if !reflect.DeepEqual([]Problem{c.want}, problems) || read {
			t.Errorf("%q: read %v, problems %q, want %q", c.json, read, problems, c.want)
		}
	}
	if problems, read := Decode([]byte(`null`), new(doc)); problems != nil || !read {
		t.Errorf("null: %v %v", problems, read)
	}
}

func TestRename(t *testing.T) {
	typ := reflect.TypeFor[doc]()
	for _, c := range []struct {
		field, want       string
		value             any
		gotField, gotWant string
		gotValue          any
	}{
		{"Inner.Count", "at most Wait", 5, `a["x"].inner.count`, "at most wait", 5},
		{"Name", "not Skip", "x", `a["x"].name`, "not Skip", "x"},
		{"Shared", "one of Name, Inner", []string{"Name", "Tags"}, `a["x"]`, "one of name, inner", []string{"name", "tags"}},
		{"Inner.Nope", "Other", 1, `a["x"].inner.Nope`, "Other", 1},
	} {
		f, v, w := Rename(`a["x"]`, typ, c.field, c.value, c.want)
		if f != c.gotField || w != c.gotWant || !reflect.DeepEqual(v, c.gotValue) {
			t.Errorf("%s: got %q %v %q", c.field, f, v, w)
		}
	}
}

func TestWithin(t *testing.T) {
	problems := []Problem{{Path: `limiters["a"].perWindow`}}
	for path, want := range map[string]bool{
		`limiters["a"].perWindow.permits`: true, `limiters["a"]`: true, `limiters["a"].perWindow`: true,
		`limiters["ab"]`: false, `limiters["a"].burst`: false, "": false,
	} {
		if Within(path, problems) != want {
			t.Errorf("Within(%q) = %v", path, !want)
		}
	}
}

type plain struct{ Name string }

type plain2 struct{ Name string }

type tagged struct {
	Name string `json:"Name"`
}

type named struct {
	Name string `json:"name"`
}

// Two paths to mid make its Name ambiguous, but encoding/json reads Deep
// below it, through the first path: it looks into an embedded type once
// at each depth.
type deep struct{ Deep string }

type mid struct {
	deep
	Name string
}

type left struct{ mid }

type right struct{ mid }

type diamond struct {
	left
	right
}

// A type embedded in itself: its fields are found once.
//
//lint:ignore U1000 the decoder under test reads it through reflection
type loop struct {
	*loop
	X int
}

// A name's field is the one encoding/json decodes it into: the shallowest,
// then the one with a tag; a name still ambiguous is no field at all (an
// unknown field here; encoding/json drops it).
func TestDecodeFieldDominance(t *testing.T) {
	for _, c := range []struct {
		json     string
		v        func() any
		problems []Problem
	}{
		{`{"name": "outer"}`, func() any {
			return new(struct {
				named
				Name string `json:"name"`
			})
		}, nil},
		{`{"Name": "tagged"}`, func() any {
			return new(struct {
				plain
				tagged
			})
		}, nil},
		{`{"Name": "x", "X": 1}`, func() any {
			return new(struct {
				plain
				plain2
				X int
			})
		}, []Problem{{"Name", "an unknown field", "one of X"}}},
		{`{"Name": "x", "Deep": "d"}`, func() any { return new(diamond) },
			[]Problem{{"Name", "an unknown field", "one of Deep"}}},
		{`{"X": 1}`, func() any { return new(loop) }, nil},
	} {
		std, got := c.v(), c.v()
		if err := json.Unmarshal([]byte(c.json), std); err != nil {
			t.Fatal(err)
		}
		problems, _ := Decode([]byte(c.json), got)
		if !reflect.DeepEqual(got, std) || !reflect.DeepEqual(problems, c.problems) {
			t.Errorf("%s into %T: %+v, problems %q; want %+v (encoding/json), problems %q", c.json, got, got, problems, std, c.problems)
		}
	}
}

type quotedFields struct {
	N int `json:"n,string"`
	//lint:ignore SA5008 the tag the decoder under test must refuse
	Inner *named   `json:"inner,string"` // only a scalar is quoted
	F     *float64 `json:",omitempty,string"`
}

type unexportedPtr struct {
	*named
	B int
}

type taggedUnexportedPtr struct {
	*named `json:"n"`
}

type upper string

func (u *upper) UnmarshalText(b []byte) error {
	*u = upper(strings.ToUpper(string(b)))
	return nil
}

type point struct{ X, Y int }

func (p *point) UnmarshalText(b []byte) error {
	_, err := fmt.Sscanf(string(b), "%d,%d", &p.X, &p.Y)
	return err
}

type texts struct {
	At    point           `json:"at"`
	Names map[upper]point `json:"names"`
}

// What Decode does not read as encoding/json does is a problem at its key,
// never a panic nor a value read otherwise: a field with the ",string"
// option, and a field behind a nil embedded pointer to an unexported struct
// (which encoding/json cannot set either). The same type's other fields
// read as ever.
func TestDecodeUnsupportedIsProblem(t *testing.T) {
	var q quotedFields
	problems, read := Decode([]byte(`{"n": "3", "inner": {"name": "x"}, "F": "1.5"}`), &q)
	want := []Problem{
		{"F", `a field with the ",string" option`, `a Go field without it: Decode does not read ",string"`},
		{"n", `a field with the ",string" option`, `a Go field without it: Decode does not read ",string"`},
	}
	if !reflect.DeepEqual(problems, want) || !read || q.Inner == nil || q.Inner.Name != "x" {
		t.Errorf(`",string": %+v, problems %q; want %q`, q, problems, want)
	}

	var p unexportedPtr
	problems, _ = Decode([]byte(`{"B": 2, "name": "x"}`), &p)
	want = []Problem{{"name", "unexported embedded jsonconfig.named, which Decode cannot set", "an exported embedded type, or a non-nil pointer to it"}}
	if !reflect.DeepEqual(problems, want) || p.B != 2 {
		t.Errorf("embedded nil pointer to an unexported struct: %+v, problems %q; want %q", p, problems, want)
	}
	p = unexportedPtr{named: &named{}} // set: encoding/json reads into it too
	if problems, _ = Decode([]byte(`{"name": "x"}`), &p); problems != nil || p.Name != "x" {
		t.Errorf("embedded pointer, set: %+v, problems %q", p, problems)
	}
	var tp taggedUnexportedPtr
	problems, _ = Decode([]byte(`{"n": {"name": "x"}}`), &tp)
	want = []Problem{{"n", "unexported embedded jsonconfig.named, which Decode cannot set", "an exported embedded type, or a non-nil pointer to it"}}
	if !reflect.DeepEqual(problems, want) {
		t.Errorf("tagged embedded nil pointer to an unexported struct: problems %q; want %q", problems, want)
	}
}

// A type that reads itself from text (encoding.TextUnmarshaler), a map key
// included, is read by encoding/json itself.
func TestDecodeTextUnmarshaler(t *testing.T) {
	data := []byte(`{"at": "1,2", "names": {"a": "3,4"}}`)
	var std, got texts
	if err := json.Unmarshal(data, &std); err != nil {
		t.Fatal(err)
	}
	if problems, _ := Decode(data, &got); problems != nil || !reflect.DeepEqual(got, std) {
		t.Errorf("%+v, problems %q; encoding/json reads %+v", got, problems, std)
	}
	if problems, _ := Decode([]byte(`{"at": {"X": 1}}`), &got); len(problems) != 1 || problems[0].Path != "at" {
		t.Errorf("an object for a TextUnmarshaler: problems %q; want one at at", problems)
	}
}

// A key given twice is a problem at its second place, in an object read
// into a struct and in one read into a map: encoding/json would keep the
// last value and lose the first without a word.
func TestDecodeRefusesRepeatedKeys(t *testing.T) {
	var d doc
	problems, _ := Decode([]byte(`{"name": "a", "name": "b", "entries": {"e": {}, "e": {"count": 2}}}`), &d)
	want := []Problem{
		{`entries["e"]`, "a key given twice", "each key once"},
		{"name", "a key given twice", "each key once"},
	}
	if !reflect.DeepEqual(want, problems) {
		t.Errorf("problems\n%q\nwant\n%q", problems, want)
	}
}
