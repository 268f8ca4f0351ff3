package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Three hosts at 6,000 permits a minute each showed as one limit of
// 18,000, and a fleet limiter failing open as 600 + 600: the limit panels
// now show each host's limit, and a shared limit without its fail-open
// share, and the fleet row's use panel only the fleet's limiters. promtool
// evaluates the panels' queries over such series.
func TestLimitPanelsNeverSumHosts(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed; .ci/prometheus.sh installs it")
		}
		t.Skip("promtool is not installed")
	}
	vars := strings.NewReplacer(`$limiter`, `.*`, `$host`, `.*`, `$__rate_interval`, `5m`, `"`, `\"`)
	expr := func(panelTitle string, i int) string {
		for _, r := range rows {
			for _, p := range r.panels {
				if p.title == panelTitle {
					return vars.Replace(p.queries[i].expr)
				}
			}
		}
		t.Fatalf("no panel %q", panelTitle)
		return ""
	}
	var series strings.Builder
	for _, host := range []string{"a.test", "b.test", "c.test"} {
		fmt.Fprintf(&series, `      - series: 'headroom_limiter_rate_per_min{headroom_limiter="api", headroom_limiter_kind="per_second", server_address="%s"}'
        values: '6000x10'
      - series: 'headroom_limiter_limit{headroom_limiter="db", headroom_limiter_kind="concurrency", server_address="%s"}'
        values: '50x10'
      - series: 'headroom_limiter_queue_limit{headroom_limiter="db", headroom_limiter_kind="concurrency", server_address="%s"}'
        values: '1000x10'
`, host, host, host)
	}
	series.WriteString(`      - series: 'headroom_limiter_rate_per_min{headroom_limiter="shared", headroom_limiter_kind="per_second"}'
        values: '600x10'
      - series: 'headroom_limiter_rate_per_min{headroom_limiter="shared", headroom_limiter_kind="per_second", headroom_fleet_policy="fail_open"}'
        values: '600x10'
      - series: 'headroom_limiter_in_use{headroom_limiter="shared", headroom_limiter_kind="per_second"}'
        values: '4x10'
      - series: 'headroom_limiter_in_use{headroom_limiter="shared", headroom_limiter_kind="per_second", headroom_fleet_policy="fail_open"}'
        values: '1x10'
      - series: 'headroom_limiter_in_use{headroom_limiter="local", headroom_limiter_kind="per_second"}'
        values: '7x10'
      - series: 'headroom_fleet_redis_duration_seconds_count{headroom_limiter="shared", headroom_fleet_operation="token_bucket"}'
        values: '0+10x10'
`)
	perHost := func(limiter string, v int) string {
		var b strings.Builder
		for _, host := range []string{"a.test", "b.test", "c.test"} {
			fmt.Fprintf(&b, "          - labels: '{server_address=\"%s\", headroom_limiter=\"%s\"}'\n            value: %d\n", host, limiter, v)
		}
		return b.String()
	}
	test := fmt.Sprintf(`rule_files: []
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
%s    promql_expr_test:
      - expr: "%s"
        eval_time: 5m
        exp_samples:
%s          - labels: '{headroom_limiter="shared"}'
            value: 600
      - expr: "%s"
        eval_time: 5m
        exp_samples:
%s      - expr: "%s"
        eval_time: 5m
        exp_samples:
%s      - expr: "%s"
        eval_time: 5m
        exp_samples:
          - labels: '{headroom_limiter="shared"}'
            value: 4
`, series.String(),
		expr("Rate limit against use", 0), perHost("api", 6000),
		expr("Concurrency limit against use", 0), perHost("db", 50),
		expr("Queue", 1), perHost("db", 1000),
		// The fleet row shows a shared limiter's use, without its
		// fail-open share's or a local limiter's.
		expr("Shared limits: permits in use and available", 0))
	path := filepath.Join(t.TempDir(), "three_hosts_test.yml")
	if err := os.WriteFile(path, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s\n%s", err, out, test)
	}
}
