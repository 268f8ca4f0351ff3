package headroom_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A program that imports limit, httpx and resilience, as the README's
// client does, needs none of the modules that only fleet and the
// simulator's commands use: its `go list -m all` names no Redis client and
// no plotting library.
func TestNewModuleNeedsNoRedisNorPlot(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/user\n\ngo 1.26.0\n\n" +
			"require github.com/headroom-go/headroom v0.0.0\n\n" +
			"replace github.com/headroom-go/headroom => " + root + "\n",
		"main.go": "package main\n\nimport (\n" +
			"\t_ \"github.com/headroom-go/headroom/httpx\"\n" +
			"\t_ \"github.com/headroom-go/headroom/limit\"\n" +
			"\t_ \"github.com/headroom-go/headroom/resilience\"\n" +
			")\n\nfunc main() {}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "tidy")
	modules := goCmd("list", "-m", "all")
	for _, line := range strings.Split(modules, "\n") {
		path, _, _ := strings.Cut(line, " ")
		for _, banned := range []string{"redis", "gonum.org/", "plot"} {
			if strings.Contains(path, banned) {
				t.Errorf("go list -m all names %s (matches %q)", path, banned)
			}
		}
	}
	if !strings.Contains(modules, "go.opentelemetry.io/otel/metric ") {
		t.Errorf("go list -m all does not list the modules the packages need:\n%s", modules)
	}
	goCmd("build", "-o", os.DevNull, ".")
}
