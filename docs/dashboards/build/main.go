// Command build writes docs/dashboards/headroom.json, the Grafana dashboard
// over headroom's metrics, from the rows and panels in panels.go, with
// Grafana's own Go SDK (github.com/grafana/grafana-foundation-sdk/go): the
// SDK lays the panels out on the grid, each with its id. It is a
// module of its own so that the library never depends on the SDK.
//
//	cd docs/dashboards/build && go run .
//
// Its test fails when the committed file differs from what it writes.
package main

//lint:file-ignore SA1019 The v2 dashboard the SDK prefers is not the JSON Grafana imports from a file, which @grafana/schema's Dashboard type checks; the classic builder writes that.

import (
	"encoding/json"
	"log"
	"os"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// output is where the dashboard goes, from this directory.
const output = "../headroom.json"

type row struct {
	title  string
	panels []panel
}

type panel struct {
	title, description, unit string
	queries                  []query
}

type query struct{ expr, legend string }

func main() {
	raw, err := render()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(output, raw, 0o644); err != nil {
		log.Fatal(err)
	}
}

// render is the dashboard's JSON, indented, with a final newline.
func render() ([]byte, error) {
	d, err := build().Build()
	if err != nil {
		return nil, err
	}
	d.Panels = expand(d.Panels)
	if d.Templating.List != nil {
		for i := range d.Templating.List {
			// The interval variable's settings, which the SDK sets on every
			// variable and @grafana/schema's VariableModel does not know.
			v := &d.Templating.List[i]
			v.Auto, v.AutoMin, v.AutoCount = nil, nil, nil
		}
	}
	raw, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(raw, '\n'), nil
}

// datasource is the panels' and variables' data source: the dashboard's
// datasource variable.
func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}
}

func build() *dashboard.DashboardBuilder {
	b := dashboard.NewDashboardBuilder("headroom").
		Uid("headroom").
		Tags([]string{"headroom", "opentelemetry"}).
		Editable().
		Time("now-1h", "now").
		Refresh("30s").
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").
			Label("data source").
			Type("prometheus").
			Current(option("Prometheus", "prometheus"))).
		WithVariable(queryVariable("limiter", "label_values(headroom_limiter_leases_total, headroom_limiter)")).
		WithVariable(queryVariable("host", "label_values(http_client_request_duration_seconds_count, server_address)")).
		WithVariable(queryVariable("runner", "label_values(headroom_runner_calls_total, headroom_runner)"))
	id := uint32(0)
	for _, r := range rows {
		id++
		rb := dashboard.NewRowBuilder(r.title).Id(id)
		for _, p := range r.panels {
			id++
			pb := timeseries.NewPanelBuilder().
				Id(id).
				Title(p.title).
				Datasource(datasource()).
				Unit(p.unit).
				Height(8).
				Span(12).
				Legend(common.NewVizLegendOptionsBuilder().
					ShowLegend(true).
					DisplayMode(common.LegendDisplayModeList).
					Placement(common.LegendPlacementBottom))
			if p.description != "" {
				pb.Description(p.description)
			}
			for i, q := range p.queries {
				pb.WithTarget(prometheus.NewDataqueryBuilder().
					RefId(string(rune('A' + i))).
					Datasource(datasource()).
					Expr(q.expr).
					LegendFormat(q.legend))
			}
			rb.WithPanel(pb)
		}
		b.WithRow(rb)
	}
	return b
}

// expand opens every row and lists its panels after it, as Grafana keeps
// an open row's: the builder collapses a row it gives panels to, and only
// a collapsed row holds its panels. The builder has laid them out on the
// grid already.
func expand(ps []dashboard.PanelOrRowPanel) []dashboard.PanelOrRowPanel {
	var out []dashboard.PanelOrRowPanel
	for _, p := range ps {
		out = append(out, p)
		if r := p.RowPanel; r != nil {
			r.Collapsed = false
			for i := range r.Panels {
				out = append(out, dashboard.PanelOrRowPanel{Panel: &r.Panels[i]})
			}
			r.Panels = []dashboard.Panel{}
		}
	}
	return out
}

// queryVariable is a multi-value variable of the label values query
// selects, All by default.
func queryVariable(name, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(name).
		Datasource(datasource()).
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Multi(true).
		IncludeAll(true).
		AllValue(".*").
		Current(option("All", "$__all"))
}

// option is a variable's current value, shown as text.
func option(text, value string) dashboard.VariableOption {
	return dashboard.VariableOption{
		Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr(text)},
		Value: dashboard.StringOrArrayOfString{String: cog.ToPtr(value)},
	}
}
