package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestDefaultPrintsTheComparisonTable(t *testing.T) {
	code, out, errs := runCmd(t, "-modes", "no-limiter,fixed-rate", "-duration", "7m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Quota 3,000, 2 instances of 2,000", "seed 42", "Mode", "Throughput", "Share", "429s", "Rejected", "Gave up", "p95 wait", "Recovery", "no limiter", "fixed rate"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestJSONFields(t *testing.T) {
	code, out, errs := runCmd(t, "-format", "json", "-modes", "aimd", "-duration", "8m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	want := []string{"mode", "throughput_per_min", "share", "throttled", "rejected", "gave_up", "p95_wait_s", "recovery_s"}
	if len(rows[0]) != len(want) {
		t.Errorf("fields %v, want exactly %v", rows[0], want)
	}
	for _, k := range want {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("no field %q in %v", k, rows[0])
		}
	}
	if rows[0]["mode"] != "AIMD" {
		t.Errorf("mode %v", rows[0]["mode"])
	}
	if s, _ := rows[0]["share"].(float64); !(s > 0 && s <= 1) {
		t.Errorf("share %v: want a fraction in (0, 1]", rows[0]["share"])
	}
	// No drop in steady: recovery is null.
	_, out, _ = runCmd(t, "-format", "json", "-modes", "aimd", "-duration", "2m", "-scenario", "steady")
	if !strings.Contains(out, `"recovery_s": null`) {
		t.Errorf("steady: want recovery_s null:\n%s", out)
	}
}

func TestCSV(t *testing.T) {
	code, out, _ := runCmd(t, "-format", "csv", "-modes", "cubic", "-duration", "6m", "-scenario", "join")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || lines[0] != "mode,throughput_per_min,share,throttled,rejected,gave_up,p95_wait_s,recovery_s" || !strings.HasPrefix(lines[1], "CUBIC,") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestBadFlagsExit2WithAClearError(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-instances", "0"}, "Instances = 0"},
		{[]string{"-quota", "0"}, "Quota = 0"},
		{[]string{"-duration", "3m"}, "Duration = 3m0s: want above 6m0s, when scenario drop"},
		{[]string{"-modes", "cubic,,aimd"}, "empty name"},
		{[]string{"-seed", "18446744073709551615", "-seeds", "3"}, "past the largest seed"},
		{[]string{"-instances", "-3"}, "Instances = -3"},
		{[]string{"-quota", "-1"}, "Quota = -1"},
		{[]string{"-demand", "NaN"}, "Demand = NaN"},
		{[]string{"-demand", "abc"}, "invalid value"},
		{[]string{"-duration", "1x"}, "invalid value"},
		{[]string{"-duration", "-5m"}, "Duration = -5m0s"},
		{[]string{"-seed", "0"}, "-seed 0"},
		{[]string{"-scenario", "storm"}, "steady, drop, join or mixed"},
		{[]string{"-modes", "aimd,warp"}, `unknown mode "warp"`},
		{[]string{"-modes", ","}, "empty name"},
		{[]string{"-modes", " "}, "at least one mode"},
		{[]string{"-format", "xml"}, "table, csv or json"},
		{[]string{"-plot", "out.pdf"}, ".svg or .png"},
		{[]string{"-seeds", "0"}, "-seeds 0"},
		{[]string{"-nosuchflag"}, "not defined"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		code, out, errs := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 2 and %q", c.args, code, errs, out, c.want)
		}
	}
	if code, _, _ := runCmd(t, "-h"); code != 0 {
		t.Errorf("-h: exit %d, want 0", code)
	}
}

func TestPlotWritesSVGAndPNG(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"p.svg", "p.png"} {
		file := filepath.Join(dir, name)
		code, _, errs := runCmd(t, "-modes", "aimd,cubic", "-duration", "2m", "-scenario", "steady", "-plot", file)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		b, err := os.ReadFile(file)
		if err != nil || len(b) < 1000 {
			t.Fatalf("%s: %d bytes, %v", name, len(b), err)
		}
		if name == "p.svg" && !bytes.Contains(b, []byte("<svg")) || name == "p.png" && !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s: not the right format", name)
		}
	}
	if code, _, errs := runCmd(t, "-modes", "aimd", "-duration", "2m", "-scenario", "steady", "-plot", filepath.Join(dir, "no", "such", "dir.svg")); code != 1 || !strings.Contains(errs, "plot") {
		t.Errorf("unwritable plot: exit %d, %q; want 1", code, errs)
	}
}

func TestSeedsSpread(t *testing.T) {
	code, out, errs := runCmd(t, "-seeds", "3", "-modes", "fixed-rate", "-duration", "7m")
	if code != 0 || !strings.Contains(out, "Seeds 42 to 44") || !strings.Contains(out, "fixed rate") {
		t.Errorf("exit %d: %s\n%s", code, errs, out)
	}
}

func TestFirstScreen(t *testing.T) {
	code, out, _ := runCmd(t, "-modes", "cubic+quota", "-duration", "2m", "-scenario", "steady")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || !strings.Contains(lines[0], "scenario steady") || !strings.Contains(lines[0], "seed 42") ||
		!strings.HasPrefix(lines[2], "Mode") || !strings.Contains(lines[len(lines)-1], "docs/simulator.md") {
		t.Errorf("exit %d; want a title naming the scenario and the seed, the table, a line pointing at the docs:\n%s", code, out)
	}
	code, out, errs := runCmd(t, "-h")
	if code != 0 || !strings.Contains(out, "usage: headroom-sim") || !strings.Contains(out, "-modes") || errs != "" {
		t.Errorf("-h: exit %d, stdout %q, stderr %q; want the usage on stdout", code, out, errs)
	}
	// A bad flag is said once, not followed by the whole usage.
	_, _, errs = runCmd(t, "-instances", "x")
	if strings.Count(errs, `invalid value "x"`) != 1 || strings.Contains(errs, "-demand") {
		t.Errorf("bad flag: stderr %q; want the error once and no usage", errs)
	}
}

// FuzzParseFlags: whatever the arguments, parse returns options that run
// (a valid config and at least one mode) or an error; it never panics.
func FuzzParseFlags(f *testing.F) {
	f.Add("-modes", "aimd,CUBIC+quota", "-seeds=3")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		o, _, err := parse([]string{a, b, c})
		if err != nil || o.serve != "" || o.buildSite != "" {
			return // the page's flags run nothing here
		}
		if verr := o.cfg.Defaults().Validate(); verr != nil || len(o.modes) == 0 || o.seeds < 1 || len(o.cfgs) == 0 {
			t.Fatalf("%q %q %q: accepted with %v, %d modes, %d seeds, %d servers", a, b, c, verr, len(o.modes), o.seeds, len(o.cfgs))
		}
		for _, cfg := range o.cfgs {
			if verr := cfg.Defaults().Validate(); verr != nil {
				t.Fatalf("%q %q %q: accepted server %v with %v", a, b, c, cfg.Server, verr)
			}
		}
	})
}
