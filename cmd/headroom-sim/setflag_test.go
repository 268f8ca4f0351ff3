package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// -set changes the modes that take the setting and leaves the others: a
// CUBIC capped at 2,700 a minute accepts at most that, the quota guard
// runs as it did.
func TestSetChangesTheModesThatTakeIt(t *testing.T) {
	rows := func(args ...string) map[string]row {
		code, out, errs := runCmd(t, append([]string{"-format", "json", "-modes", "cubic,quota-guard", "-duration", "3m", "-scenario", "steady"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var rs []row
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatal(err)
		}
		m := map[string]row{}
		for _, r := range rs {
			r.Recovery = nil
			m[r.Mode] = r
		}
		return m
	}
	plain, capped := rows(), rows("-set", "MaxUnitsPerMinute=2700")
	if !(capped["CUBIC"].Throughput <= 2700 && capped["CUBIC"].Throughput < plain["CUBIC"].Throughput) {
		t.Errorf("CUBIC: %v a minute capped at 2,700, %v without", capped["CUBIC"].Throughput, plain["CUBIC"].Throughput)
	}
	if capped["quota guard"] != plain["quota guard"] {
		t.Errorf("the quota guard has no MaxUnitsPerMinute, yet it changed: %+v, %+v", capped["quota guard"], plain["quota guard"])
	}
}

func TestSetListsEveryProblem(t *testing.T) {
	code, out, errs := runCmd(t, "-modes", "aimd,no-limiter", "-set", "Beta=0.5,IncreaseStep=x,DecreaseFactor=3")
	for _, want := range []string{`-set "IncreaseStep=x": want NAME=VALUE`, "AIMD.DecreaseFactor = 3", "-set Beta: no mode of -modes has that setting; AIMD takes IncreaseStep"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if code != 2 || out != "" {
		t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
	}
}
