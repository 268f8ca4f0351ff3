package page

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A control at the command's default is left out of the command line; the
// others are written as the flags take them, in the usage's order.
func TestFlags(t *testing.T) {
	if got := DefaultWorld().Flags([]string{"CUBIC + quota"}, nil); !slices.Equal(got, []string{"-modes", "CUBIC+quota"}) {
		t.Errorf("the defaults: %q", got)
	}
	w := World{Seed: 7, Instances: 3, Quota: 500, Demand: 1500.5, Duration: 90, Scenario: "steady", Server: "leaky-bucket",
		Window: 10, Burst: 20, Publish: "none"}
	want := []string{"-seed", "7", "-instances", "3", "-demand", "1500.5", "-duration", "90s", "-scenario", "steady",
		"-server", "leaky-bucket", "-window", "10s", "-burst", "20", "-publish", "none", "-modes", "no-limiter,AIMD",
		"-set", "DecreaseFactor=0.5,IncreaseStep=600"}
	if got := w.Flags([]string{"no limiter", "AIMD"}, map[string]float64{"IncreaseStep": 600, "DecreaseFactor": 0.5}); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// A quota that is not 50 a second over the window is written; a burst
	// for a kind without a bucket is not.
	w = DefaultWorld()
	w.Quota, w.Burst = 2000, 20
	if got := w.Flags([]string{"AIMD"}, nil); !slices.Equal(got, []string{"-quota", "2000", "-modes", "AIMD"}) {
		t.Errorf("got %q", got)
	}
}

func TestDurationFlag(t *testing.T) {
	for d, want := range map[time.Duration]string{2 * time.Hour: "2h", 15 * time.Minute: "15m", 90 * time.Second: "90s", 1500 * time.Millisecond: "1.5s"} {
		if got := durationFlag(d); got != want {
			t.Errorf("durationFlag(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0:00", 303 * time.Second: "5:03", 15 * time.Minute: "15:00"} {
		if got := clock(d); got != want {
			t.Errorf("clock(%v) = %q, want %q", d, got, want)
		}
	}
}

// A live run's frames hand each sampled second over once, and its table
// rows every tenth second.
func TestFramesHandEachSecondOnce(t *testing.T) {
	w := DefaultWorld()
	w.Scenario, w.Duration = "steady", 60
	l, err := Start(Settings{World: w, Mode: "CUBIC"})
	if err != nil {
		t.Fatal(err)
	}
	if f := l.Frame(0); f.Now != 0 || len(f.Points) != 0 || f.Done || len(f.Tiles) != 6 || f.Quota != 3000 {
		t.Fatalf("at 0: %+v", f)
	}
	var points []Point
	for t0 := 7.5; ; t0 += 7.5 {
		l.Advance(t0)
		f := l.Frame(len(points))
		points = append(points, f.Points...)
		if f.Done {
			break
		}
	}
	rows := 0
	for i, p := range points {
		if p.T != float64(i) || len(p.Rates) != 2 {
			t.Fatalf("point %d: %+v", i, p)
		}
		if p.Row != nil {
			rows++
		}
	}
	if len(points) != 60 || rows != 6 {
		t.Errorf("%d points, %d rows; want 60 and 6", len(points), rows)
	}
}
