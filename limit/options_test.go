package limit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// problemFields returns the fields Validate complains about, in order.
func problemFields(err error) []string {
	var fields []string
	for _, e := range unjoin(err) {
		var oe *headroom.ConfigError
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
		QueueLimit:       new(-1),
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
	if diff := cmp.Diff(want, problemFields(o.Validate())); diff != "" {
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
	if diff := cmp.Diff([]string{"Options"}, problemFields(o.Validate())); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestBurstBelongsToPerSecond(t *testing.T) {
	o := Options{Concurrency: 3, Burst: 5}
	if diff := cmp.Diff([]string{"Burst"}, problemFields(o.Validate())); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// Every option a constructor takes applies to every shape: the knobs of one
// shape (Burst, Segments) are arguments or Options fields, so putting one on
// the wrong shape does not compile. WithQueueLimit works on every shape,
// the adaptive rate's included.
func TestOptionsApplyToEveryShape(t *testing.T) {
	opts := []Option{WithName("x"), WithQueueLimit(10), WithAttributes()}
	for name, build := range map[string]func() (Limiter, error){
		"per_second":    func() (Limiter, error) { return PerSecond(5, 1, opts...) },
		"per_window":    func() (Limiter, error) { return PerWindow(5, time.Second, opts...) },
		"concurrency":   func() (Limiter, error) { return Concurrency(5, opts...) },
		"adaptive":      func() (Limiter, error) { return Adaptive(adaptive.ConcurrencyConfig{}, opts...) },
		"adaptive_rate": func() (Limiter, error) { return AdaptiveRate(adaptive.RateConfig{}, opts...) },
	} {
		if _, err := build(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A window written out beside another shape is two shapes.
	o := Options{Concurrency: 5, PerWindow: &WindowOptions{Permits: 10, Window: headroom.Duration(time.Second), Segments: 3}}
	if diff := cmp.Diff([]string{"Options"}, problemFields(o.Validate())); diff != "" {
		t.Errorf("two full shapes: problems (-want +got):\n%s", diff)
	}
}

func TestConstructorsRefuseZero(t *testing.T) {
	if _, err := PerSecond(0, 1); err == nil {
		t.Error("PerSecond(0, 1) built")
	}
	if _, err := Concurrency(0); err == nil {
		t.Error("Concurrency(0) built")
	}
	if _, err := PerWindow(0, time.Minute); err == nil {
		t.Error("PerWindow(0, 1m) built")
	}
	var oe *headroom.ConfigError
	if _, err := PerSecond(0, 1); !errors.As(err, &oe) {
		t.Errorf("PerSecond(0, 1) error %T is not an *headroom.ConfigError", err)
	}
}

func TestOptionsJSON(t *testing.T) {
	const doc = `{"perWindow": {"permits": 1000, "window": "1m", "segments": 6}, "queueLimit": 10, "name": "api"}`
	var o Options
	if err := json.Unmarshal([]byte(doc), &o); err != nil {
		t.Fatal(err)
	}
	want := Options{PerWindow: &WindowOptions{Permits: 1000, Window: headroom.Duration(time.Minute), Segments: 6}, QueueLimit: new(10), Name: "api"}
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
	var d headroom.Duration
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

// ParseOptions lists every unknown field and every problem at once, each at
// its JSON path; what the decoder cannot read past is one error.
func TestParseOptions(t *testing.T) {
	o, err := ParseOptions([]byte(`{"perWindow": {"permits": 1000, "window": "1m", "segments": 6}, "queueLimit": 10, "name": "api"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Options{PerWindow: &WindowOptions{Permits: 1000, Window: headroom.Duration(time.Minute), Segments: 6}, QueueLimit: new(10), Name: "api"}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}

	for _, c := range []struct {
		json string
		want []string
	}{
		{`{"perWindow": {"permit": 10, "window": "0s", "segmnts": 3}, "queueLimt": 5, "nmae": "x"}`,
			[]string{"nmae", "perWindow.permit", "perWindow.segmnts", "queueLimt", "perWindow.permits", "perWindow.window"}},
		{`{"adaptiveRate": {"aimd": {"decreaseFactor": 2, "step": 1}, "maxWait": "-1s"}, "queueLimit": 5}`,
			[]string{"adaptiveRate.aimd.step", "adaptiveRate.maxWait", "adaptiveRate.aimd.decreaseFactor"}},
		{`{"adaptive": {"minimum": -1, "multipl": 3}, "concurrency": 5}`,
			[]string{"adaptive.multipl", "Options", "adaptive.minimum"}},
		{`{"permitsPerSecond": 5, "burst": -1, "meterProvider": {}}`, []string{"meterProvider", "burst"}},
		{`{"perWindow": {"permits": "ten", "window": "1m"}}`, []string{"perWindow.permits"}},
		{`{"concurrency": 5} {}`, []string{"line 1, column 20"}},
		{`{"concurrency": 5`, []string{"line 1, column 18"}},
		{`{"perWindow": {"permits": 1, "window": 60}}`, []string{"perWindow.window"}},
		{`{"PerWindow": {"permits": 1, "window": "1m"}}`, []string{"PerWindow", "Options"}},
		{`{"concurrency": 5, "concurrency": 6}`, []string{"concurrency"}},
	} {
		o, err := ParseOptions([]byte(c.json))
		if diff := cmp.Diff(c.want, problemFields(err)); diff != "" {
			t.Errorf("%s: problems (-want +got):\n%s\n%v", c.json, diff, err)
		}
		if o.PerWindow != nil || o.AdaptiveRate != nil || o.Concurrency != 0 {
			t.Errorf("%s: returned %+v with an error", c.json, o)
		}
	}
}
