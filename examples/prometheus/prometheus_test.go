package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"
)

// TestDashboardAgainstPrometheus runs the example while a real Prometheus
// scrapes it every second and evaluates the alert rules every second,
// their windows and for: scaled down 60 times (a minute becomes a second).
// It then asks Prometheus's HTTP API, over the run, for every query of the
// Grafana dashboard, which must return data, and for each alert, which the
// flat-out phase must fire and the quiet phase resolve; and the counts
// must agree with what the example counted itself. promtool must accept
// the alert rules and pass their tests.
func TestDashboardAgainstPrometheus(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is not installed; .ci/prometheus.sh installs it")
		}
		t.Skip("prometheus is not installed (apt-get install prometheus, or run .ci/prometheus.sh)")
	}
	if testing.Short() {
		t.Skip("runs for 45 seconds")
	}
	rules := filepath.Join("..", "..", "docs", "dashboards", "alerts.yml")
	if out, err := exec.Command("promtool", "check", "rules", rules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	// Each rule fires on the series that must fire it and is silent on
	// healthy full use.
	ruleTests := exec.Command("promtool", "test", "rules", "alerts_test.yml")
	ruleTests.Dir = filepath.Dir(rules)
	if out, err := ruleTests.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}

	exampleAddr, promAddr := freeAddr(t), freeAddr(t)
	startPrometheus(t, bin, exampleAddr, promAddr, scaledRules(t, rules))
	start := time.Now()
	var out bytes.Buffer
	const runFor = 45 * time.Second
	if err := run(exampleAddr, runFor, &out); err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	t.Logf("example: %s", out.String())
	api := promAPI{t: t, base: "http://" + promAddr}

	for _, q := range dashboardQueries(t) {
		if !api.hasData(q, start, end) {
			t.Errorf("dashboard query returned no data: %s", q)
		}
	}
	for name := range alertExprs(t, rules) {
		if strings.HasPrefix(name, "HeadroomFleet") {
			continue // the example has no Redis; alerts_test.yml proves them
		}
		firing := fmt.Sprintf(`ALERTS{alertname=%q, alertstate="firing"}`, name)
		episodes, last := api.episodes(firing, start, end)
		t.Logf("%s fired %d times, last at %v", name, episodes, last.Sub(start).Round(time.Second))
		switch {
		case episodes == 0:
			t.Errorf("alert %s never fired over the run", name)
		case last.After(start.Add(runFor - drain - time.Second)):
			// It must resolve while the trickle still succeeds, not
			// because the workload stopped.
			t.Errorf("alert %s still firing at the end of the quiet phase (last at %v; the workload stopped at %v)", name,
				last.Sub(start).Round(time.Second), runFor-drain)
		}
	}
	checkCounts(t, api, rep, end.Add(-time.Second))
}

// scaledRules is the alert rules at path with every duration in minutes
// made seconds (5m becomes 5s: the windows, the offsets and the for:), in a
// file of their own, so that a run of seconds fires and resolves what a
// production Prometheus would over minutes.
func scaledRules(t *testing.T, path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	scaled := regexp.MustCompile(`\b(\d+)m\b`).ReplaceAll(raw, []byte("${1}s"))
	out := filepath.Join(t.TempDir(), "alerts_scaled.yml")
	if err := os.WriteFile(out, scaled, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCounts compares what Prometheus last scraped, after the workload
// stopped, with the example's report.
func checkCounts(t *testing.T, api promAPI, rep report, at time.Time) {
	for runner, n := range rep.Calls {
		if got := api.scalar(fmt.Sprintf(`sum(headroom_runner_calls_total{headroom_runner=%q})`, runner), at); got != float64(n) {
			t.Errorf("%s: runner calls %v, the example made %d", runner, got, n)
		}
		q := fmt.Sprintf(`sum(headroom_runner_calls_total{headroom_runner=%q, headroom_stop="succeeded"})`, runner)
		if got := api.scalar(q, at); got != float64(rep.Succeeded[runner]) {
			t.Errorf("%s: calls succeeded %v, the example saw %d", runner, got, rep.Succeeded[runner])
		}
	}
	// A request cut short as the workload stopped may be counted by one side
	// only: allow one per worker.
	const inFlight = 18
	if got := api.scalar(`sum(http_client_request_duration_seconds_count)`, at); math.Abs(got-float64(rep.Received)) > inFlight {
		t.Errorf("requests timed %v, the server received %d", got, rep.Received)
	}
	for code, n := range rep.Status {
		q := fmt.Sprintf(`sum(http_client_request_duration_seconds_count{http_response_status_code="%d"}) or vector(0)`, code)
		if got := api.scalar(q, at); math.Abs(got-float64(n)) > inFlight {
			t.Errorf("status %d: %v timed, the server answered %d", code, got, n)
		}
	}
	for code, n := range rep.Status {
		if n == 0 {
			t.Errorf("the workload never drew a %d from the server", code)
		}
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPrometheus runs Prometheus on promAddr, scraping target and
// evaluating rules every second, until the test ends.
func startPrometheus(t *testing.T, bin, target, promAddr, rules string) {
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [%q]\nscrape_configs:\n  - job_name: example\n    static_configs:\n      - targets: [%q]\n", rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr, "--log.level=warn")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus:\n%s", logs.String())
		}
	})
	ready := func() bool {
		resp, err := http.Get("http://" + promAddr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	if !poll(ready, 30*time.Second) {
		t.Fatalf("prometheus not ready after 30s:\n%s", logs.String())
	}
}

// poll asks cond every 200ms until it holds, for at most limit, and
// reports whether it held. Prometheus is a process of its own, ready when
// its /-/ready says so: nothing in the test can be told when that is, so
// it is asked.
func poll(cond func() bool, limit time.Duration) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// dashboardQueries are the dashboard's query expressions with every
// variable set to all values.
func dashboardQueries(t *testing.T) []string {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "dashboards", "headroom.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	r := strings.NewReplacer("$__rate_interval", "5s", "$limiter", ".*", "$host", ".*", "$runner", ".*")
	var qs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if strings.Contains(tg.Expr, "headroom_fleet") {
				continue // the fleet row: the example has no Redis
			}
			qs = append(qs, r.Replace(tg.Expr))
		}
	}
	if len(qs) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	return qs
}

func alertExprs(t *testing.T, path string) map[string]string {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string } `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			m[r.Alert] = r.Expr
		}
	}
	return m
}

type promAPI struct {
	t    *testing.T
	base string
}

type promResult struct {
	Status string
	Error  string
	Data   struct {
		Result []struct {
			Value  [2]any   `json:"value"`
			Values [][2]any `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

func (a promAPI) get(path string, v url.Values) promResult {
	resp, err := http.Get(a.base + path + "?" + v.Encode())
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r promResult
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		a.t.Fatal(err)
	}
	if r.Status != "success" {
		a.t.Errorf("%s %s: %s", path, v.Get("query"), r.Error)
	}
	return r
}

// hasData reports whether q has a finite value at some step of the run.
func (a promAPI) hasData(q string, start, end time.Time) bool {
	r := a.get("/api/v1/query_range", url.Values{"query": {q}, "start": {unix(start)}, "end": {unix(end)}, "step": {"1"}})
	for _, s := range r.Data.Result {
		for _, v := range s.Values {
			if f, err := strconv.ParseFloat(v[1].(string), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				return true
			}
		}
	}
	return false
}

// episodes counts the runs of consecutive steps (a second each) at which
// q has a series over the run, and returns the last such step.
func (a promAPI) episodes(q string, start, end time.Time) (n int, last time.Time) {
	r := a.get("/api/v1/query_range", url.Values{"query": {q}, "start": {unix(start)}, "end": {unix(end)}, "step": {"1"}})
	steps := map[int64]bool{}
	for _, s := range r.Data.Result {
		for _, v := range s.Values {
			if at, ok := v[0].(float64); ok {
				steps[int64(math.Round(at))] = true
			}
		}
	}
	for at := range steps {
		if !steps[at-1] {
			n++
		}
		if t := time.Unix(at, 0); t.After(last) {
			last = t
		}
	}
	return n, last
}

// scalar is q's single value at at, or NaN.
func (a promAPI) scalar(q string, at time.Time) float64 {
	r := a.get("/api/v1/query", url.Values{"query": {q}, "time": {unix(at)}})
	if len(r.Data.Result) != 1 {
		a.t.Errorf("%s: %d series, want 1", q, len(r.Data.Result))
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(r.Data.Result[0].Value[1].(string), 64)
	return f
}

func unix(t time.Time) string { return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64) }
