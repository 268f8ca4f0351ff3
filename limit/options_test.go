package limit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// problems returns the fields Validate complains about, in order.
func problems(err error) []string {
	var fields []string
	for _, e := range unjoin(err) {
		var oe *OptionError
		if errors.As(e, &oe) {
			fields = append(fields, oe.Field)
		} else {
			fields = append(fields, "?"+e.Error())
		}
	}
	return fields
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestValidateListsEveryProblem(t *testing.T) {
	o := Options{
		PermitsPerSecond: -1,
		Burst:            -2,
		Concurrency:      20,
		PerWindow:        &WindowOptions{Permits: 0, Window: -1, Segments: -3},
		QueueLimit:       -1,
	}
	want := []string{
		"Options", // three shapes
		"PermitsPerSecond",
		"Burst",
		"PerWindow.Permits",
		"PerWindow.Window",
		"PerWindow.Segments",
		"QueueLimit",
	}
	if diff := cmp.Diff(want, problems(o.Validate())); diff != "" {
		t.Fatalf("Validate problems (-want +got):\n%s", diff)
	}
}

func TestValidateTwoShapesIsAnError(t *testing.T) {
	o := Options{PermitsPerSecond: 100, Concurrency: 20}
	err := o.Validate()
	if err == nil {
		t.Fatal("two shapes validated; want an error")
	}
	if !strings.Contains(err.Error(), "PermitsPerSecond") || !strings.Contains(err.Error(), "Concurrency") {
		t.Errorf("error %q does not name both shapes", err)
	}
	if _, err := New(o); err == nil {
		t.Error("New built a limiter from two shapes")
	}
}

func TestValidateNoShape(t *testing.T) {
	var o Options
	if diff := cmp.Diff([]string{"Options"}, problems(o.Validate())); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestBurstBelongsToPerSecond(t *testing.T) {
	o := Options{Concurrency: 3, Burst: 5}
	if diff := cmp.Diff([]string{"Burst"}, problems(o.Validate())); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestConstructorsRefuseZero(t *testing.T) {
	if _, err := PerSecond(0); err == nil {
		t.Error("PerSecond(0) built")
	}
	if _, err := Concurrency(0); err == nil {
		t.Error("Concurrency(0) built")
	}
	if _, err := PerWindow(0, time.Minute); err == nil {
		t.Error("PerWindow(0, 1m) built")
	}
	var oe *OptionError
	if _, err := PerSecond(0); !errors.As(err, &oe) {
		t.Errorf("PerSecond(0) error %T is not an *OptionError", err)
	}
}

func TestOptionsJSON(t *testing.T) {
	const doc = `{"perWindow": {"permits": 1000, "window": "1m", "segments": 6}, "queueLimit": 10, "name": "api"}`
	var o Options
	if err := json.Unmarshal([]byte(doc), &o); err != nil {
		t.Fatal(err)
	}
	want := Options{PerWindow: &WindowOptions{Permits: 1000, Window: Duration(time.Minute), Segments: 6}, QueueLimit: 10, Name: "api"}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	back, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var again Options
	if err := json.Unmarshal(back, &again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(o, again); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

func TestDurationRefusesBareNumbers(t *testing.T) {
	var d Duration
	if err := json.Unmarshal([]byte(`60`), &d); err == nil {
		t.Fatal("a bare number decoded as a duration")
	}
	if err := json.Unmarshal([]byte(`"soon"`), &d); err == nil {
		t.Fatal(`"soon" decoded as a duration`)
	}
	if err := json.Unmarshal([]byte(`"1m30s"`), &d); err != nil || time.Duration(d) != 90*time.Second {
		t.Fatalf("1m30s: got %v, %v", time.Duration(d), err)
	}
}
