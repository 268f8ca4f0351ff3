package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// siteDir writes a small page: what the server serves, and a build script
// it does not.
func siteDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"index.html": "<!doctype html><title>page</title>" + strings.Repeat("<p>text</p>", 200),
		"app.js":     strings.Repeat("console.log('x');\n", 200),
		"sim.wasm":   "\x00asm" + strings.Repeat("\x01\x02\x03\x04", 2000),
		"build.sh":   "#!/bin/sh\n",
		"tiny.css":   "a{}",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func get(t *testing.T, h http.Handler, method, path string, header http.Header) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

// The server sends the compressed form to a client that takes gzip, and the
// same bytes once decompressed; the plain form to one that does not.
func TestSiteHandlerCompresses(t *testing.T) {
	dir := siteDir(t)
	h, err := siteHandler(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "sim.wasm"))
	for _, accept := range []string{"gzip, deflate, br", "br;q=1, GZIP;q=0.5", "*"} {
		resp := get(t, h, "GET", "/sim.wasm", http.Header{"Accept-Encoding": {accept}})
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatalf("%q: %v", accept, err)
		}
		body, _ := io.ReadAll(zr)
		if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Type") != "application/wasm" || !bytes.Equal(body, want) {
			t.Errorf("%q: %v, %d bytes decompressed", accept, resp.Header, len(body))
		}
	}
	for _, accept := range []string{"", "identity", "gzip;q=0", "br"} {
		resp := get(t, h, "GET", "/sim.wasm", http.Header{"Accept-Encoding": {accept}})
		body, _ := io.ReadAll(resp.Body)
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) {
			t.Errorf("%q: %v, %d bytes", accept, resp.Header, len(body))
		}
	}
	// A file that compression would not shrink goes as it is.
	if resp := get(t, h, "GET", "/tiny.css", http.Header{"Accept-Encoding": {"gzip"}}); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("tiny.css: %v", resp.Header)
	}
}

// "/" is index.html; an unchanged file costs a 304; only the page's own
// files are served, and only to GET and HEAD.
func TestSiteHandlerServesThePage(t *testing.T) {
	h, err := siteHandler(siteDir(t))
	if err != nil {
		t.Fatal(err)
	}
	resp := get(t, h, "GET", "/", nil)
	body, _ := io.ReadAll(resp.Body)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "<!doctype html>") || etag == "" ||
		resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("/: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := get(t, h, "GET", "/index.html", http.Header{"If-None-Match": {etag}}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("with its ETag: %d; want 304", resp.StatusCode)
	}
	if resp := get(t, h, "HEAD", "/app.js", nil); resp.StatusCode != 200 || resp.ContentLength <= 0 {
		t.Errorf("HEAD: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	for path, status := range map[string]int{"/build.sh": 404, "/nope.js": 404, "/../site_test.go": 404} {
		if resp := get(t, h, "GET", path, nil); resp.StatusCode != status {
			t.Errorf("%s: %d; want %d", path, resp.StatusCode, status)
		}
	}
	if resp := get(t, h, "POST", "/", nil); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", resp.StatusCode, resp.Header)
	}
	if _, err := siteHandler(t.TempDir()); err == nil {
		t.Error("a folder without index.html was served")
	}
}

// A build for a static host copies the page's files and nothing else.
func TestCopyFilesTakesThePageOnly(t *testing.T) {
	src, dst := siteDir(t), t.TempDir()
	if err := copyFiles(src, dst); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dst)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "app.js,index.html,tiny.css" {
		t.Errorf("copied %v; want the page's sources without the script and the build's output", names)
	}
}

func TestFindSite(t *testing.T) {
	root, site, err := findSite(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil || site != filepath.Join(root, siteSources) {
		t.Errorf("root %s, site %s: %v", root, site, err)
	}
	if _, _, err := findSite(t.TempDir()); err == nil || !strings.Contains(err.Error(), "checkout of headroom") {
		t.Errorf("outside a checkout: %v", err)
	}
}

// -serve and -build-site take an address or a folder, and no other flag.
func TestPageFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-serve", "127.0.0.1:8080", "-modes", "aimd"}, "take no other flag; given -modes"},
		{[]string{"-serve", ""}, "want an address"},
		{[]string{"-build-site", ""}, "want a folder"},
		{[]string{"-serve", ":1", "-build-site", "x"}, "one or the other"},
	} {
		code, _, errs := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	o, _, err := parse([]string{"-serve", "127.0.0.1:0"})
	if err != nil || o.serve != "127.0.0.1:0" {
		t.Errorf("-serve: %+v, %v", o, err)
	}
}
