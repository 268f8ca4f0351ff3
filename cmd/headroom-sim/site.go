package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// The interactive page: its sources in the checkout, and what a build adds
// to them.
const (
	// siteSources is where the page's sources are, from the checkout's root.
	siteSources = "docs/site"
	// wasmPackage is the simulator's WebAssembly main, from the root.
	wasmPackage = "./cmd/headroom-sim/internal/wasm"
	// wasmFile and wasmExec are what a build writes beside the sources:
	// the simulator, and Go's loader for it (from the Go installation).
	wasmFile = "sim.wasm"
	wasmExec = "wasm_exec.js"
)

// siteTypes are the content types of the files the page is made of, by
// extension: the only files a build copies and the server serves.
var siteTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".wasm": "application/wasm",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// siteType is the content type of a file of the page, "" for another file.
func siteType(name string) string { return siteTypes[filepath.Ext(name)] }

// pageOptions are the options of -serve or -build-site, which take no
// other flag.
func pageOptions(serve, buildTo string, set map[string]bool) (*options, error) {
	var others []string
	for name := range set {
		if name != "serve" && name != "build-site" {
			others = append(others, "-"+name)
		}
	}
	slices.Sort(others)
	switch {
	case set["serve"] && set["build-site"]:
		return nil, errors.New("-serve and -build-site: give one or the other")
	case len(others) > 0:
		return nil, fmt.Errorf("-serve and -build-site take no other flag; given %s (the page has its own controls)", strings.Join(others, ", "))
	case set["serve"] && serve == "":
		return nil, errors.New("-serve: want an address, such as 127.0.0.1:8080")
	case set["build-site"] && buildTo == "":
		return nil, errors.New("-build-site: want a folder")
	}
	return &options{serve: serve, buildSite: buildTo}, nil
}

// findSite returns the checkout's root and its page sources, looking up
// from dir.
func findSite(dir string) (root, site string, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, siteSources, "index.html")); err == nil {
			return d, filepath.Join(d, siteSources), nil
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("no %s/index.html in %s or above it: run this from a checkout of headroom", siteSources, dir)
		}
	}
}

// buildSite builds the page into out: the sources of site copied (unless
// out is site), the simulator compiled to WebAssembly from the checkout at
// root, and Go's wasm_exec.js beside it. go build's cache makes a build
// with nothing changed take seconds.
func buildSite(root, site, out string, stderr io.Writer) error {
	goTool, err := findGo()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	same, err := sameDir(site, out)
	if err != nil {
		return err
	}
	if !same {
		if err := copyFiles(site, out); err != nil {
			return err
		}
	}
	build := exec.Command(goTool, "build", "-trimpath", "-ldflags=-s", "-o", filepath.Join(out, wasmFile), wasmPackage)
	build.Dir = root
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the simulator for the browser (GOOS=js GOARCH=wasm go build %s): %w", wasmPackage, err)
	}
	goroot, err := exec.Command(goTool, "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	loader := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", wasmExec)
	if err := copyFile(loader, filepath.Join(out, wasmExec)); err != nil {
		return fmt.Errorf("the Go installation's WebAssembly loader: %w", err)
	}
	return nil
}

// findGo is the go command: the one on PATH, else the one of the Go
// installation this program was built with.
func findGo() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	//lint:ignore SA1019 a fallback only, checked below: where the Go installation this program was built with keeps its go command
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		return "", errors.New("no go command on PATH: building the page needs Go")
	}
	return p, nil
}

func sameDir(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// copyFiles copies the page's files in dir src (not its folders, its
// build script, nor what a build wrote there) into dst.
func copyFiles(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || siteType(e.Name()) == "" || e.Name() == wasmFile || e.Name() == wasmExec {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
