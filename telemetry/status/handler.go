package status

import (
	"encoding/json"
	"html/template"
	"net/http"
	"strings"

	"github.com/headroom-go/headroom/internal/metrics"
)

// Handler returns the status page's handler. It answers GET and HEAD.
func Handler() http.Handler { return http.HandlerFunc(serve) }

func serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "status: GET or HEAD only", http.StatusMethodNotAllowed)
		return
	}
	s := metrics.Snapshot()
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Query().Get("format") == "json" || strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, s)
}

var page = template.Must(template.New("status").Funcs(template.FuncMap{
	"num": func(p *float64) string {
		if p == nil {
			return "–"
		}
		return strings.TrimRight(strings.TrimRight(template.HTMLEscapeString(formatFloat(*p)), "0"), ".")
	},
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>headroom status</title>
<style>body{font-family:sans-serif}table{border-collapse:collapse;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}</style>
</head><body>
<h1>headroom</h1>
<h2>Limiters</h2>
<table><tr><th>limiter</th><th>kind</th><th>host</th><th>limit</th><th>in use</th><th>available</th><th>queued</th><th>queue limit</th><th>acquired</th><th>denied</th><th>throttles</th></tr>
{{range .Limiters}}<tr><td>{{.Name}}</td><td>{{.Kind}}</td><td>{{index .Attributes "server.address"}}</td><td>{{num .Limit}}{{if .RateKind}}/min{{end}}</td><td>{{num .InUse}}</td><td>{{num .Available}}</td><td>{{.Queued}}</td><td>{{.QueueLimit}}</td><td>{{.Acquired}}</td><td>{{.Denied}}</td><td>{{.Throttles}}</td></tr>
{{end}}</table>
<h2>Quota guards</h2>
<table><tr><th>guard</th><th>key</th><th>limit</th><th>remaining</th><th>reset in</th><th>blocked for</th></tr>
{{range $g := .Guards}}{{range .Keys}}<tr><td>{{$g.Name}}</td><td>{{.Key}}</td><td>{{if .Known}}{{.Limit}}{{else}}–{{end}}</td><td>{{if .Known}}{{.Remaining}}{{else}}–{{end}}</td><td>{{.Reset}}</td><td>{{.Blocked}}</td></tr>
{{end}}{{end}}</table>
<h2>Circuit breakers</h2>
<table><tr><th>breaker</th><th>state</th></tr>
{{range .Breakers}}<tr><td>{{.Name}}</td><td>{{.State}}</td></tr>
{{end}}</table>
</body></html>
`))
