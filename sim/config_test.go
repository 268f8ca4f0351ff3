package sim

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/headroom-go/headroom"
)

// Every problem Validate finds, the server's included, is one
// *headroom.ConfigError that names its field, as everywhere in the module,
// and the joined error matches headroom.ErrConfig.
func TestConfigProblemsAreConfigErrors(t *testing.T) {
	err := Config{Instances: -1, Duration: 2 * time.Minute, DropAt: -time.Second, Latency: Latency{Min: 2, Max: 1},
		Server: Server{Kind: kindFixedWindow, Burst: 3, Publish: "smoke"}}.Defaults().Validate()
	if !errors.Is(err, headroom.ErrConfig) {
		t.Fatalf("errors.Is(%v, ErrConfig) = false", err)
	}
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *headroom.ConfigError
		if !errors.As(e, &ce) || ce.Package != "sim" {
			t.Fatalf("%v is not a *headroom.ConfigError of package sim", e)
		}
		fields = append(fields, ce.Field)
	}
	want := []string{"Instances", "Latency", "DropAt", "Server.Publish", "Server.Burst"}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("fields of the problems (-want +got):\n%s\n%v", diff, err)
	}
}
