package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/headroom-go/headroom/acceptance"
)

// machine describes what the run ran on, for the report. A fact that
// cannot be found says so rather than failing the run.
func machine(ctx context.Context) []acceptance.Fact {
	facts := []acceptance.Fact{
		{Name: "date", Value: time.Now().UTC().Format("2006-01-02 15:04 MST")},
		{Name: "Go", Value: fmt.Sprintf("%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)},
		{Name: "cores", Value: fmt.Sprintf("runtime.NumCPU() %d, GOMAXPROCS %d, `nproc` %s",
			runtime.NumCPU(), runtime.GOMAXPROCS(0), command(ctx, "nproc"))},
		{Name: "CPU", Value: cpuModel()},
		{Name: "kernel", Value: command(ctx, "uname", "-sr")},
		{Name: "headroom", Value: headroomCommit(ctx)},
		{Name: "nginx", Value: strings.TrimPrefix(command(ctx, "nginx", "-v"), "nginx version: ")},
		{Name: "HAProxy", Value: firstLine(command(ctx, "haproxy", "-v"))},
		{Name: "node", Value: command(ctx, "node", "--version")},
		{Name: "express-rate-limit", Value: nodeModuleVersion("express-rate-limit")},
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		var mods []string
		for _, d := range info.Deps {
			switch d.Path {
			case "github.com/hashicorp/go-retryablehttp", "github.com/go-chi/httprate",
				"github.com/ulule/limiter/v3", "github.com/didip/tollbooth/v7":
				mods = append(mods, d.Path+" "+d.Version)
			}
		}
		facts = append(facts, acceptance.Fact{Name: "Go modules", Value: strings.Join(mods, ", ")})
	}
	return facts
}

// command is a program's combined output, trimmed, or why there is none.
func command(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("unknown (%s: %v)", name, err)
	}
	return strings.TrimSpace(string(out))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// cpuModel is /proc/cpuinfo's first "model name".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if name, value, ok := strings.Cut(lines.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown (no model name in /proc/cpuinfo)"
}

// headroomCommit is the repository's commit, and whether the working tree
// differs from it.
func headroomCommit(ctx context.Context) string {
	commit := command(ctx, "git", "rev-parse", "--short", "HEAD")
	if strings.HasPrefix(commit, "unknown") {
		return commit
	}
	if status := command(ctx, "git", "status", "--porcelain", "--untracked-files=no"); status != "" && !strings.HasPrefix(status, "unknown") {
		commit += " with uncommitted changes"
	}
	return commit
}

// nodeModuleVersion is the version of an installed node module of
// acceptance/express.
func nodeModuleVersion(name string) string {
	for _, dir := range []string{"express", filepath.Join("acceptance", "express")} {
		data, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err != nil {
			continue
		}
		var pkg struct{ Version string }
		if err := json.NewDecoder(bytes.NewReader(data)).Decode(&pkg); err != nil || pkg.Version == "" {
			return "unknown (its package.json has no version)"
		}
		return pkg.Version
	}
	return "not installed"
}
