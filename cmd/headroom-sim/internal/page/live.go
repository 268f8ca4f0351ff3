package page

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
	"github.com/headroom-go/headroom/sim"
)

// Live is a panel's run: a sim.Live with the settings it came from.
type Live struct {
	run      *sim.Live
	settings Settings
	flags    []string
}

// Tile is one of a panel's figures, as the page shows it.
type Tile struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Help  string `json:"help"`
}

// Point is one second of a live run, for the chart; Rates are units a
// minute. Row, every tenth second, is the same second as text for the
// table that goes with the chart.
type Point struct {
	T         float64   `json:"t"`
	Rates     []float64 `json:"rates"`
	Rate      float64   `json:"rate"`
	Quota     float64   `json:"quota"`
	Accepted  int       `json:"accepted"`
	Throttled int       `json:"throttled"`
	Queued    int       `json:"queued"`
	Row       []string  `json:"row,omitempty"`
}

// RowHeader names the columns of Point.Row.
var RowHeader = []string{"Time", "Sum of rates", "Quota a minute", "Accepted, last 60 s", "429s that second", "In queue"}

// Frame is what a panel draws after an advance: the clock, the tiles, the
// seconds sampled since the last frame, and a sentence saying what the
// chart shows now, for a reader who cannot see it.
type Frame struct {
	Now     float64  `json:"now"`
	End     float64  `json:"end"`
	Clock   string   `json:"clock"`
	Done    bool     `json:"done"`
	Quota   float64  `json:"quota"`              // in force now, a minute
	Error   string   `json:"runError,omitempty"` // what stopped the run early
	Tiles   []Tile   `json:"tiles"`
	Points  []Point  `json:"points"`
	Summary string   `json:"summary"`
	Flags   []string `json:"flags"`
	Command string   `json:"command"`
}

// Start sets up the run s describes, at time 0.
func Start(s Settings) (*Live, error) {
	cfg, m, err := s.Build()
	if err != nil {
		return nil, err
	}
	run, err := sim.NewLive(cfg, m)
	if err != nil {
		return nil, err
	}
	return &Live{run: run, settings: s, flags: s.Flags([]string{m.Name}, s.Options)}, nil
}

// Advance runs to t seconds (at most the run's end).
func (l *Live) Advance(t float64) { l.run.Advance(seconds(t)) }

// Frame is the run at the time it has run to, with the seconds sampled
// from the n-th on.
func (l *Live) Frame(n int) Frame {
	cfg := l.run.Config()
	g := l.run.Gauges()
	f := Frame{Now: l.run.Now().Seconds(), End: cfg.Duration.Seconds(), Done: l.run.Done(),
		Clock: clock(l.run.Now()) + " of " + clock(cfg.Duration), Tiles: tiles(g), Quota: g.Quota,
		Flags: l.flags, Command: CommandLine(l.flags)}
	if err := l.run.Err(); err != nil {
		f.Error = err.Error()
	}
	samples := l.run.Samples(n)
	f.Points = make([]Point, 0, len(samples))
	for _, s := range samples {
		p := Point{T: s.At.Seconds(), Rates: s.Rates, Rate: s.Rate, Quota: s.Quota, Accepted: s.Accepted, Throttled: s.Throttled, Queued: s.Queued}
		if s.At%(10*time.Second) == 0 {
			p.Row = []string{clock(s.At), table.Thousands(int(math.Round(s.Rate))), table.Thousands(int(math.Round(s.Quota))),
				table.Thousands(s.Accepted), table.Thousands(s.Throttled), table.Thousands(s.Queued)}
		}
		f.Points = append(f.Points, p)
	}
	if all := l.run.Samples(0); len(all) > 0 {
		f.Summary = summary(all[len(all)-1], g)
	}
	return f
}

// tiles are the panel's figures, named as the seeds' page names them.
func tiles(g sim.Gauges) []Tile {
	return []Tile{
		{"Units used, 60 s", table.Thousands(g.Accepted), "Units the API accepted in the last 60 seconds."},
		{"Sum of rates", table.Thousands(int(math.Round(g.Rate))), "The instances' rates added up, units a minute (0 for a mode without a rate)."},
		{"Throttled", table.Thousands(g.Throttled), "429 responses so far."},
		{"In queue", table.Thousands(g.Queued), "Requests waiting in the limiters now."},
		{"p95 wait", table.Seconds(g.P95Wait), "The 95th percentile of the wait for units so far."},
		{"Rejected or gave up", table.Thousands(g.Rejected + g.GaveUp), "Requests the limiter refused, and requests that met a 429 on all their attempts."},
	}
}

// summary says in words what the chart shows at its last second.
func summary(s sim.LiveSample, g sim.Gauges) string {
	var rates []string
	for _, r := range s.Rates {
		rates = append(rates, table.Thousands(int(math.Round(r))))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "At %s the instances' rates add up to %s units a minute", clock(s.At), table.Thousands(int(math.Round(s.Rate))))
	if len(rates) > 1 {
		fmt.Fprintf(&b, " (%s)", strings.Join(rates, ", "))
	}
	fmt.Fprintf(&b, ", against a hidden quota of %s a minute; %s units were accepted in the last 60 s, %s requests got a 429 in the last second, %s wait in the queue; %s 429s in all.",
		table.Thousands(int(math.Round(s.Quota))), table.Thousands(s.Accepted), table.Thousands(s.Throttled), table.Thousands(s.Queued), table.Thousands(g.Throttled))
	return b.String()
}

// clock writes d as minutes and seconds: "5:03".
func clock(d time.Duration) string {
	s := int(d / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
