// Command realservers runs the acceptance suite's matrix — headroom's
// recommended HTTP client beside go-retryablehttp against real rate-limited
// servers on loopback — prints a table as cells finish, and writes the
// report, docs/real-servers.md.
//
// Usage, from acceptance/:
//
//	go run ./cmd/realservers                 # the full matrix (about 34 min); writes ../docs/real-servers.md
//	go run ./cmd/realservers -short          # the short slice (about 2 min); writes nothing unless -out
//	go run ./cmd/realservers -cells nginx    # the cells whose names match; writes nothing unless -out
//
// Flags:
//
//	-short        run the short slice instead of the full matrix
//	-cells re     run only the cells whose names match the regular expression re
//	-sequential   run the two clients one after the other instead of at once
//	-out path     write the report to path ("-" for standard output)
//
// It exits 1 when a cell could not run for a reason other than a missing
// program (a skipped cell is reported, not an error), 2 on bad flags.
// Missed goals are results, not errors: they are in the table and the
// report.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"time"

	"github.com/headroom-go/headroom/acceptance"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("realservers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	short := fs.Bool("short", false, "run the short slice instead of the full matrix")
	cellsRE := fs.String("cells", "", "run only the cells whose names match this regular expression")
	sequential := fs.Bool("sequential", false, "run the two clients one after the other instead of at once")
	out := fs.String("out", "", `write the report here ("-": standard output); default ../docs/real-servers.md for the whole matrix, nothing otherwise`)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "realservers: unexpected arguments %q\n", fs.Args())
		return 2
	}

	cells, slice, err := selectCells(*short, *cellsRE)
	if err != nil {
		fmt.Fprintf(stderr, "realservers: %v\n", err)
		return 2
	}
	path := *out
	if path == "" && !*short && *cellsRE == "" {
		path = defaultReportPath()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := acceptance.RunOptions{Sequential: *sequential}
	report := acceptance.Report{Slice: slice, Options: opts, Commands: commands, Installs: installs}

	var total time.Duration
	for _, c := range cells {
		total += c.Duration
	}
	if *sequential {
		total *= 2
	}
	fmt.Fprintf(stderr, "%d cells, about %s of running\n", len(cells), total.Round(time.Second))
	fmt.Fprintln(stdout, acceptance.TableHeader())
	started, failed := time.Now(), 0
	for _, c := range cells {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stderr, "→ %s (%s)\n", c.Name, c.Duration)
		res, err := acceptance.RunCell(ctx, c, opts)
		if err != nil && !acceptance.IsSkip(err) {
			failed++
			report.Errors = append(report.Errors, acceptance.CellError{Cell: c.Name, Err: err.Error()})
			fmt.Fprintf(stdout, "%-62s error: %v\n", c.Name, err)
			continue
		}
		report.Results = append(report.Results, res)
		fmt.Fprintln(stdout, acceptance.TableRow(res))
	}
	report.WallTime = time.Since(started)
	report.Machine = machine(ctx)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "realservers: interrupted; the report holds the cells that finished")
		report.Slice += " (interrupted: only the cells that finished)"
	}

	if path != "" {
		if err := writeReport(path, report, stdout); err != nil {
			fmt.Fprintf(stderr, "realservers: %v\n", err)
			return 1
		}
		if path != "-" {
			fmt.Fprintf(stderr, "wrote %s\n", path)
		}
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "realservers: %d cells could not run\n", failed)
		return 1
	}
	return 0
}

// selectCells is the full matrix, or the short slice, narrowed to the cells
// whose names match pattern when it is not empty, with the words the report
// describes them by.
func selectCells(short bool, pattern string) (cells []acceptance.Cell, slice string, err error) {
	cells, slice = acceptance.Matrix(), "the full matrix"
	if short {
		cells, slice = acceptance.ShortSlice(), "the short slice"
	}
	if pattern == "" {
		return cells, slice, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, "", fmt.Errorf("-cells: %w", err)
	}
	var kept []acceptance.Cell
	for _, c := range cells {
		if re.MatchString(c.Name) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil, "", fmt.Errorf("-cells %q matches none of the %d cells of %s", pattern, len(cells), slice)
	}
	return kept, fmt.Sprintf("the cells of %s whose names match `%s`", slice, pattern), nil
}

// defaultReportPath is docs/real-servers.md at the repository's root:
// found from this file's path when it is run from source (go run), else
// from acceptance/ as the working directory.
func defaultReportPath() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Join(filepath.Dir(file), "..", "..", "..")
		if _, err := os.Stat(filepath.Join(root, "docs")); err == nil {
			return filepath.Join(root, "docs", "real-servers.md")
		}
	}
	return filepath.Join("..", "docs", "real-servers.md")
}

func writeReport(path string, r acceptance.Report, stdout io.Writer) error {
	if path == "-" {
		return r.WriteMarkdown(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := r.WriteMarkdown(f); err != nil {
		f.Close()
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	return nil
}

// commands are the ways to reproduce the report, for its first section.
var commands = []acceptance.Fact{
	{Name: "installs nginx, HAProxy, node and express's modules (see below)", Value: "./install.sh"},
	{Name: "the full matrix, about 34 min; writes ../docs/real-servers.md", Value: "go run ./cmd/realservers"},
	{Name: "the same, one client after the other (twice as long)", Value: "go run ./cmd/realservers -sequential"},
	{Name: "the short slice, about 2 min (-out to write a report)", Value: "go run ./cmd/realservers -short"},
	{Name: "only the cells whose names match", Value: "go run ./cmd/realservers -cells 'nginx|haproxy' -out -"},
	{Name: "the short slice as tests; CI=true fails instead of skipping", Value: "go test ./..."},
	{Name: "the unit tests only", Value: "go test -short ./..."},
}

// installs says what install.sh installs, for the report.
const installs = "`install.sh` (as root, or with password-less sudo) installs only what is missing: nginx and HAProxy " +
	"from Debian's packages, with the system services they bring kept from starting (the suite runs instances of its " +
	"own); node and npm (Debian's nodejs and npm) when there is no node; and `acceptance/express/node_modules` by " +
	"`npm ci` from the committed package-lock.json (express-rate-limit and Express). The Go middleware and our own " +
	"servers need nothing: they run in the suite's process."
