package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAnotherServerAddsTheShares(t *testing.T) {
	code, out, errs := runCmd(t, "-server", "token-bucket", "-window", "1s", "-per-second", "50", "-publish", "draft6",
		"-modes", "cubic+quota", "-duration", "2m", "-scenario", "steady")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Quota 50, token bucket (burst a window), 1 s window, publishing draft-6", "Of allowance", "429 share",
		"CUBIC + quota", "Of allowance: units accepted over the most an ideal client could have had (6,050)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// JSON and CSV carry the two shares too; the seeds' server does not.
	_, out, _ = runCmd(t, "-server", "fixed", "-window", "10s", "-modes", "aimd", "-duration", "1m", "-scenario", "steady", "-format", "json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, k := range []string{"allowance_share", "throttled_share"} {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("no %s in %v", k, rows[0])
		}
	}
	_, out, _ = runCmd(t, "-server", "leaky-bucket", "-burst", "10", "-nodelay", "-modes", "aimd", "-duration", "1m", "-scenario", "steady", "-format", "csv")
	if !strings.HasPrefix(out, "mode,throughput_per_min,share,throttled,rejected,gave_up,p95_wait_s,recovery_s,allowance_share,throttled_share\n") {
		t.Errorf("csv:\n%s", out)
	}
	_, out, _ = runCmd(t, "-server", "sliding-counter", "-window", "5s", "-modes", "aimd", "-duration", "1m", "-scenario", "steady", "-seeds", "2")
	if !strings.Contains(out, "Of allowance") || !strings.Contains(out, "sliding counter, 5 s window") {
		t.Errorf("spread:\n%s", out)
	}
}

func TestServerTable(t *testing.T) {
	args := []string{"-server", "fixed,token-bucket", "-window", "10s", "-per-second", "5", "-publish", "none,draft-6",
		"-modes", "cubic+quota", "-duration", "2m", "-scenario", "steady", "-demand", "400"}
	code, out, errs := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "CUBIC + quota, 2 instances of 400, 2 min, seed 42, scenario steady") {
		t.Errorf("title: %q", lines[0])
	}
	var rows []string
	for _, l := range lines {
		if strings.Contains(l, " 10 s ") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "fixed window") || !strings.HasPrefix(rows[1], "token bucket, burst 50") ||
		strings.Count(rows[0], "%") != 4 || !strings.Contains(out, "none") || !strings.Contains(out, "draft-6") {
		t.Errorf("want a row per server, a column per publish:\n%s", out)
	}
	_, out, _ = runCmd(t, append(args, "-format", "csv")...)
	if n := strings.Count(strings.TrimSpace(out), "\n"); n != 4 || !strings.HasPrefix(out, "mode,server,window_s,quota,burst,nodelay,delay,publish,seed,") {
		t.Errorf("csv: %d rows:\n%s", n, out)
	}
	_, out, _ = runCmd(t, append(args, "-format", "json", "-seeds", "2")...)
	var runs []map[string]any
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 8 || runs[0]["server"] != "fixed-window" || runs[0]["quota"] != 50.0 {
		t.Errorf("json: %v, %d runs:\n%.400s", err, len(runs), out)
	}
	// A list of bursts makes a row per bucket depth; a fixed window has one.
	_, out, _ = runCmd(t, "-server", "fixed,token-bucket,leaky-bucket", "-burst", "0,20", "-per-second", "5", "-window", "10s",
		"-modes", "cubic+quota", "-duration", "1m", "-scenario", "steady", "-demand", "400")
	for _, want := range []string{"fixed window ", "token bucket, burst 50 ", "token bucket, burst 20 ", "leaky bucket, burst 0 ", "leaky bucket, burst 20 "} {
		if strings.Count(out, want) != 1 {
			t.Errorf("want one row %q:\n%s", want, out)
		}
	}
	_, out, _ = runCmd(t, append(args, "-format", "markdown")...)
	if !strings.Contains(out, "| Server | Window | Quota | none | draft-6 |\n|---|---:|---:|---:|---:|\n| fixed window |") {
		t.Errorf("markdown:\n%s", out)
	}
}

func TestBadServerFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-server", "gcra"}, `unknown server "gcra"`},
		{[]string{"-server", "fixed,,token-bucket"}, "an empty name"},
		{[]string{"-publish", "draft-8"}, `unknown publish "draft-8"`},
		{[]string{"-window", "500ms"}, "-window 500ms: want 1s to 24h"},
		{[]string{"-window", "soon"}, `-window "soon"`},
		{[]string{"-server", "fixed", "-burst", "5"}, "-burst 5: only token-bucket and leaky-bucket have a bucket; -server is fixed-window"},
		{[]string{"-server", "token-bucket", "-burst", "-1"}, `-burst "-1": want 0 or more units`},
		{[]string{"-server", "token-bucket", "-burst", "5,x"}, `-burst "x"`},
		{[]string{"-server", "token-bucket", "-nodelay"}, "-nodelay and -delay are nginx's"},
		{[]string{"-server", "leaky-bucket", "-nodelay", "-delay", "2"}, "nginx takes one or the other"},
		{[]string{"-aligned"}, "-aligned is for fixed-window; -server is sliding-log"},
		{[]string{"-reset", "unit"}, "-reset is for token-bucket and leaky-bucket"},
		{[]string{"-server", "token-bucket", "-reset", "half"}, `-reset "half": want full or unit`},
		{[]string{"-epoch", "ceil"}, "-epoch is for -publish x-ratelimit"},
		{[]string{"-publish", "x-ratelimit", "-epoch", "round"}, `-epoch "round": want floor or ceil`},
		{[]string{"-quota", "100", "-per-second", "5"}, "give one or the other"},
		{[]string{"-window", "1s", "-per-second", "0.5"}, "is 0.5 units: want a whole number"},
		{[]string{"-per-second", "-3"}, "-per-second -3: want more than 0"},
		{[]string{"-costs", "1:x"}, `-costs "1:x"`},
		{[]string{"-costs", "0"}, `-costs "0"`},
		{[]string{"-server", "all", "-plot", "x.svg"}, "-plot draws one server"},
		{[]string{"-server", "leaky-bucket", "-window", "24h", "-quota", "50"}, "nginx's smallest rate"},
	} {
		code, out, errs := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestBadFlagsAllAtOnce: every problem is named in one go, and a problem
// common to every server of a table is named once.
func TestBadFlagsAllAtOnce(t *testing.T) {
	code, _, errs := runCmd(t, "-server", "warp,fixed", "-publish", "smoke", "-window", "1s,2s", "-burst", "5",
		"-nodelay", "-epoch", "up", "-instances", "0", "-costs", "x")
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{`unknown server "warp"`, `unknown publish "smoke"`, "-burst 5", "-nodelay and -delay",
		`-epoch "up"`, "Instances = 0", `-costs "x"`} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	code, _, errs = runCmd(t, "-server", "all", "-window", "1s,10s", "-instances", "0")
	if code != 2 || strings.Count(errs, "Instances = 0") != 1 {
		t.Errorf("exit %d; want instances named once:\n%s", code, errs)
	}
}

func TestUsageNamesTheServerFlags(t *testing.T) {
	_, out, _ := runCmd(t, "-h")
	for _, want := range []string{"-server", "-window", "-per-second", "-burst", "-nodelay", "-delay", "-aligned", "-reset",
		"-publish", "-epoch", "-costs", "sliding-counter", "x-ratelimit"} {
		if !strings.Contains(out, want) {
			t.Errorf("usage lacks %q", want)
		}
	}
}
