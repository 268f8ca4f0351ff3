package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
	"github.com/headroom-go/headroom/sim"
)

// serverRun is one run of the table of servers: a mode against one server
// with one seed.
type serverRun struct {
	mode int
	cfg  int
	seed uint64
	res  *sim.Result
}

// runServers runs every mode against every server of o.cfgs, with o.seeds
// seeds each, side by side, and prints the table of servers: for each mode,
// server kind and window, the share of the allowance and the 429 share
// under each publish (medians over the seeds).
func runServers(o *options, stdout, stderr io.Writer) int {
	var runs []serverRun
	for m := range o.modes {
		for c := range o.cfgs {
			for i := range o.seeds {
				runs = append(runs, serverRun{mode: m, cfg: c, seed: o.cfg.Defaults().Seed + uint64(i)})
			}
		}
	}
	errs := make([]error, len(runs))
	inParallel(len(runs), func(i int) {
		c := o.cfgs[runs[i].cfg]
		c.Seed, c.NoSeries = runs[i].seed, true
		runs[i].res, errs[i] = sim.Run(c, o.modes[runs[i].mode])
	})
	if err := errors.Join(errs...); err != nil {
		return failed(stderr, err)
	}
	return writeAs(o.format, stderr,
		func() error { return writeServerJSON(stdout, o, runs) },
		func() error { return writeServerCSV(stdout, o, runs) },
		func() error { return writeServerTable(stdout, o, runs) })
}

// serverRow is one run in the JSON and CSV forms of the table of servers.
type serverRow struct {
	Mode           string   `json:"mode"`
	Server         string   `json:"server"`
	WindowS        float64  `json:"window_s"`
	Quota          int      `json:"quota"`
	Burst          int      `json:"burst"`
	NoDelay        bool     `json:"nodelay"`
	Delay          int      `json:"delay"`
	Publish        string   `json:"publish"`
	Seed           uint64   `json:"seed"`
	Throughput     float64  `json:"throughput_per_min"`
	Share          float64  `json:"share"`
	AllowanceShare float64  `json:"allowance_share"`
	Throttled      int      `json:"throttled"`
	ThrottledShare float64  `json:"throttled_share"`
	Sent           int      `json:"sent"`
	Rejected       int      `json:"rejected"`
	GaveUp         int      `json:"gave_up"`
	P95Wait        float64  `json:"p95_wait_s"`
	Recovery       *float64 `json:"recovery_s"`
}

func toServerRow(o *options, r serverRun) serverRow {
	c := o.cfgs[r.cfg].Defaults()
	x := toRow(r.res, true)
	return serverRow{Mode: x.Mode, Server: c.Server.Kind, WindowS: c.Server.Window.Seconds(), Quota: c.Quota,
		Burst: c.Server.Burst, NoDelay: c.Server.NoDelay, Delay: c.Server.Delay, Publish: c.Server.Publish,
		Seed: r.seed, Throughput: x.Throughput, Share: x.Share, AllowanceShare: *x.AllowanceShare,
		Throttled: x.Throttled, ThrottledShare: *x.ThrottledShare, Sent: r.res.Sent, Rejected: x.Rejected,
		GaveUp: x.GaveUp, P95Wait: x.P95Wait, Recovery: x.Recovery}
}

func writeServerJSON(w io.Writer, o *options, runs []serverRun) error {
	rows := make([]serverRow, 0, len(runs))
	for _, r := range runs {
		rows = append(rows, toServerRow(o, r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func writeServerCSV(w io.Writer, o *options, runs []serverRun) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"mode", "server", "window_s", "quota", "burst", "nodelay", "delay", "publish", "seed",
		"throughput_per_min", "share", "allowance_share", "throttled", "throttled_share", "sent", "rejected",
		"gave_up", "p95_wait_s", "recovery_s"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for _, r := range runs {
		x := toServerRow(o, r)
		rec := ""
		if x.Recovery != nil {
			rec = f(*x.Recovery)
		}
		cw.Write([]string{x.Mode, x.Server, f(x.WindowS), strconv.Itoa(x.Quota), strconv.Itoa(x.Burst),
			strconv.FormatBool(x.NoDelay), strconv.Itoa(x.Delay), x.Publish, strconv.FormatUint(x.Seed, 10),
			f(x.Throughput), f(x.Share), f(x.AllowanceShare), strconv.Itoa(x.Throttled), f(x.ThrottledShare),
			strconv.Itoa(x.Sent), strconv.Itoa(x.Rejected), strconv.Itoa(x.GaveUp), f(x.P95Wait), rec})
	}
	cw.Flush()
	return cw.Error()
}

// bucketLabel is the server column of the table: the kind and what sets
// its bucket or its windows.
func bucketLabel(c sim.Config) string {
	s := c.Server
	switch s.Kind {
	case fixedWindow:
		if s.Aligned {
			return "fixed window, aligned"
		}
		return "fixed window"
	case tokenBucket:
		b := s.Burst
		if b == 0 {
			b = c.Quota
		}
		l := "token bucket, burst " + table.Thousands(b)
		if s.UnitReset {
			l += ", reset at 1 unit"
		}
		return l
	case leakyBucket:
		l := "leaky bucket, burst " + table.Thousands(s.Burst)
		switch {
		case s.NoDelay:
			l += " nodelay"
		case s.Delay > 0:
			l += " delay=" + strconv.Itoa(s.Delay)
		}
		if s.UnitReset {
			l += ", reset at 1 unit"
		}
		return l
	}
	return strings.ReplaceAll(s.Kind, "-", " ")
}

// serverTableTitle is the first line of the table of servers: the mode
// when there is one, the instances, the run, its seeds and the scenario.
func serverTableTitle(o *options) string {
	base := o.cfg.Defaults()
	var title strings.Builder
	if len(o.modes) == 1 {
		title.WriteString(o.modes[0].Name + ", ")
	}
	fmt.Fprintf(&title, "%d instances of %s, %s", base.Instances, table.Thousands(int(math.Round(base.Demand))), table.Human(base.Duration))
	if o.seeds > 1 {
		fmt.Fprintf(&title, ", seeds %d to %d (medians)", base.Seed, base.Seed+uint64(o.seeds)-1)
	} else {
		fmt.Fprintf(&title, ", seed %d", base.Seed)
	}
	title.WriteString(table.ScenarioNote(base))
	return title.String()
}

func writeServerTable(w io.Writer, o *options, runs []serverRun) error {
	fmt.Fprintf(w, "%s\nEach cell: units accepted as a share of the allowance / 429s as a share of the requests sent\n(and how many requests gave up, when any did).\n\n", serverTableTitle(o))

	// A row is a mode against one limiter; a column is what it publishes.
	type rowKey struct {
		mode   int
		server sim.Server // Publish and EpochCeil cleared
		quota  int
	}
	type cellKey struct {
		row     rowKey
		publish string
	}
	var rowOrder []rowKey
	var publishes []string
	cells := map[cellKey][]*sim.Result{}
	for _, r := range runs {
		c := o.cfgs[r.cfg]
		s := c.Server
		s.Publish, s.EpochCeil = "", false
		rk := rowKey{r.mode, s, c.Quota}
		if !slices.Contains(rowOrder, rk) {
			rowOrder = append(rowOrder, rk)
		}
		if !slices.Contains(publishes, c.Server.Publish) {
			publishes = append(publishes, c.Server.Publish)
		}
		ck := cellKey{rk, c.Server.Publish}
		cells[ck] = append(cells[ck], r.res)
	}
	withMode := len(o.modes) > 1
	head := []string{"Server", "Window", "Quota"}
	if withMode {
		head = append([]string{"Mode"}, head...)
	}
	head = append(head, publishes...)
	rows := [][]string{head}
	for _, rk := range rowOrder {
		row := []string{bucketLabel(sim.Config{Server: rk.server, Quota: rk.quota}), table.Human(rk.server.Window), table.Thousands(rk.quota)}
		if withMode {
			row = append([]string{o.modes[rk.mode].Name}, row...)
		}
		for _, p := range publishes {
			res := cells[cellKey{rk, p}]
			if len(res) == 0 {
				row = append(row, "-")
				continue
			}
			var share, thr, gave []float64
			for _, r := range res {
				share = append(share, r.AllowanceShare)
				thr = append(thr, r.ThrottledShare())
				gave = append(gave, float64(r.GaveUp))
			}
			cell := fmt.Sprintf("%.1f%% / %.2f%%", median(share)*100, median(thr)*100)
			if g := median(gave); g > 0 {
				cell += fmt.Sprintf(" (%s gave up)", table.Thousands(int(math.Round(g))))
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	if err := table.WriteRows(w, rows, o.format == "markdown"); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n"+table.Footer)
	return err
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
