package main

import (
	"bufio"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
	"github.com/headroom-go/headroom/sim"
)

var (
	colRate   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // blue
	colQuota  = color.RGBA{R: 0x33, G: 0x33, B: 0x33, A: 0xff} // dark grey
	colUsed   = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff} // green
	colThrott = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff} // red
)

// writePlot draws, for each mode, the sum of the instances' rates, the quota
// and the units accepted over the trailing 60 s (left), and the 429s of each
// second (right), over the run; to an SVG or a PNG by the file's extension.
func writePlot(file string, cfg sim.Config, results []*sim.Result) error {
	rows := len(results)
	plots := make([][]*plot.Plot, rows)
	// The quota and the server's count are per window; the rates per
	// minute. With the seeds' 60 s window the factor is exactly 1.
	perMinute := float64(time.Minute) / float64(cfg.Server.Window)
	usedLabel := "accepted, last 60 s"
	if !table.SeedsServer(cfg.Server) {
		usedLabel = "server's count, per minute"
	}
	for i, r := range results {
		left, right, err := modePlots(r, i == rows-1, perMinute, usedLabel)
		if err != nil {
			return err
		}
		plots[i] = []*plot.Plot{left, right}
	}
	width, height := 24*vg.Centimeter, vg.Length(rows)*5.5*vg.Centimeter+1.5*vg.Centimeter

	var (
		canvas vg.CanvasWriterTo
		dc     draw.Canvas
	)
	switch strings.ToLower(filepath.Ext(file)) {
	case ".png":
		img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
		canvas, dc = vgimg.PngCanvas{Canvas: img}, draw.New(img)
	default:
		svg := vgsvg.New(width, height)
		canvas, dc = svg, draw.New(svg)
	}
	// A title line on top, the tiles below it.
	title := dc
	title.Min.Y = dc.Max.Y - 1.2*vg.Centimeter
	dc.Max.Y = title.Min.Y
	sty := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	sty.Font.Size = 11
	if !table.SeedsServer(cfg.Server) {
		sty.Font.Size = 8 // the title names the server too
	}
	sty.Font.Variant = "Sans"
	title.FillText(sty, vg.Point{X: (title.Min.X + title.Max.X) / 2, Y: (title.Min.Y + title.Max.Y) / 2}, table.Title(cfg, true))

	tiles := draw.Tiles{Rows: rows, Cols: 2, PadX: vg.Centimeter, PadY: 0.3 * vg.Centimeter,
		PadTop: 0.2 * vg.Centimeter, PadBottom: 0.2 * vg.Centimeter, PadLeft: 0.2 * vg.Centimeter, PadRight: 0.4 * vg.Centimeter}
	cs := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(cs[i][j])
		}
	}

	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	w := bufio.NewWriter(f)
	if _, err := canvas.WriteTo(w); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", file, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", file, err)
	}
	return f.Close()
}

func modePlots(r *sim.Result, last bool, perMinute float64, usedLabel string) (left, right *plot.Plot, err error) {
	n := len(r.Series)
	if n == 0 {
		return nil, nil, fmt.Errorf("plot: mode %s has no time series", r.Mode)
	}
	rate, quota, used, thr := make(plotter.XYs, n), make(plotter.XYs, n), make(plotter.XYs, n), make(plotter.XYs, n)
	hasRate, top := false, 0.0
	for i, s := range r.Series {
		q, u := float64(s.Quota)*perMinute, float64(s.Used)*perMinute
		top = max(top, s.Rate, q, u)
		x := s.At.Minutes()
		rate[i] = plotter.XY{X: x, Y: s.Rate}
		quota[i] = plotter.XY{X: x, Y: q}
		used[i] = plotter.XY{X: x, Y: u}
		thr[i] = plotter.XY{X: x, Y: float64(s.Throttled)}
		hasRate = hasRate || s.Rate > 0
	}

	left = plot.New()
	left.Title.Text = fmt.Sprintf("%s: %.0f units/min, %.0f%% of the quota", r.Mode, r.Throughput, r.Share*100)
	left.Title.TextStyle.Font.Size = 10
	left.Y.Label.Text = "units / min"
	left.Y.Min = 0
	left.Y.Max = math.Ceil(top/1000) * 1000 // whole thousands: plain tick labels
	// Bottom right: the lines run high, near the quota, most of the time.
	left.Legend.Top = false
	left.Legend.Left = false
	left.Legend.TextStyle.Font.Size = 7
	add := func(p *plot.Plot, name string, xys plotter.XYs, c color.Color, width vg.Length, dashed bool) error {
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color, l.Width = c, width
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(l)
		if name != "" {
			p.Legend.Add(name, l)
		}
		return nil
	}
	if err := add(left, "quota", quota, colQuota, vg.Points(1.2), true); err != nil {
		return nil, nil, err
	}
	if err := add(left, usedLabel, used, colUsed, vg.Points(1), false); err != nil {
		return nil, nil, err
	}
	if hasRate {
		if err := add(left, "sum of rates", rate, colRate, vg.Points(1), false); err != nil {
			return nil, nil, err
		}
	}

	right = plot.New()
	right.Title.Text = fmt.Sprintf("%s 429s", table.Thousands(r.Throttled))
	right.Title.TextStyle.Font.Size = 10
	right.Y.Label.Text = "429s / s"
	right.Y.Min = 0
	right.Y.Max = 1
	if err := add(right, "", thr, colThrott, vg.Points(0.8), false); err != nil {
		return nil, nil, err
	}
	for _, p := range []*plot.Plot{left, right} {
		p.X.Min, p.X.Max = 0, r.Series[n-1].At.Minutes()+1.0/60
		p.Add(plotter.NewGrid())
		p.X.Tick.Label.Font.Size = 7
		p.Y.Tick.Label.Font.Size = 7
		p.Y.Label.TextStyle.Font.Size = 8
		if last {
			p.X.Label.Text = "minutes"
			p.X.Label.TextStyle.Font.Size = 8
		}
	}
	return left, right, nil
}
