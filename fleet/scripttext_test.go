package fleet

import (
	"os"
	"path/filepath"
	"testing"
)

// With HEADROOM_FLEET_SCRIPTS set to a folder, writes the limiters'
// scripts there as gcra.lua and window.lua, for bench/shard_capacity.sh to
// measure the server alone with redis-benchmark.
func TestWriteScripts(t *testing.T) {
	dir := os.Getenv("HEADROOM_FLEET_SCRIPTS")
	if dir == "" {
		t.Skip("HEADROOM_FLEET_SCRIPTS is not set")
	}
	for name, src := range map[string]string{"gcra.lua": gcraSource, "window.lua": windowSource} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
