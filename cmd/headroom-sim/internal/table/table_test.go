package table

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-go/headroom/sim"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", -43767: "-43,767", 1234567: "1,234,567"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestHuman(t *testing.T) {
	for d, want := range map[time.Duration]string{15 * time.Minute: "15 min", 90 * time.Second: "90 s", 1500 * time.Millisecond: "1.5 s"} {
		if got := Human(d); got != want {
			t.Errorf("Human(%v) = %q, want %q", d, got, want)
		}
	}
}

// Against another server than the seeds', every row has the two shares
// where the header names them.
func TestRowsMatchTheHeader(t *testing.T) {
	m, _ := sim.ModeNamed("aimd")
	for _, cfg := range []sim.Config{{}, {Quota: 50, Server: sim.Server{Kind: "token-bucket", Window: time.Second, Publish: "draft-6"}}} {
		cfg = cfg.Defaults()
		cfg.Scenario, cfg.Duration, cfg.NoSeries = "steady", time.Minute, true
		res, err := sim.Run(cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		head, row := Header(cfg.Server), Row(cfg.Server, res)
		shares := !SeedsServer(cfg.Server)
		if len(head) != len(row) || len(head) != 8+2*boolInt(shares) || row[0] != "AIMD" {
			t.Fatalf("%v: header %q, row %q", cfg.Server, head, row)
		}
		if shares && (head[3] != "Of allowance" || !strings.HasSuffix(row[3], "%") || head[5] != "429 share") {
			t.Errorf("header %q, row %q", head, row)
		}
		if (AllowanceNote(cfg.Server, res) != "") != shares {
			t.Errorf("%v: note %q", cfg.Server, AllowanceNote(cfg.Server, res))
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
