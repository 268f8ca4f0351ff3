package jsonconfig

import (
	"fmt"
	"reflect"
	"testing"
)

// seconds reads itself, as limit.Duration does, and says what it wants.
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
	if d.Name != "x" || d.Entries["e3"].Wait != 5 || d.Entries["e1"].Count != 1 || len(d.Entries) != 3 || d.Tags[0] != "a" {
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
