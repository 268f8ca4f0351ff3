package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

// siteFile is one file of the page as the server holds it: as it is, and
// compressed when that is smaller (the WebAssembly shrinks to about a
// third).
type siteFile struct {
	body, gz []byte
	ctype    string
	etag     string
}

// siteHandler serves the page's files in dir, read once: "/" is
// index.html; a client that takes gzip gets the compressed form; every
// answer carries an ETag and asks the browser to check it each time, so
// that a rebuilt page is seen at once and an unchanged one costs a 304.
func siteHandler(dir string) (http.Handler, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string]*siteFile{}
	for _, e := range entries {
		ctype := siteType(e.Name())
		if !e.Type().IsRegular() || ctype == "" {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(body)
		f := &siteFile{body: body, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		if ctype != "image/png" {
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
			zw.Write(body)
			zw.Close()
			if b.Len() < len(body) {
				f.gz = b.Bytes()
			}
		}
		files["/"+e.Name()] = f
	}
	if files["/index.html"] == nil {
		return nil, fmt.Errorf("%s has no index.html", dir)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == "/" {
			p = "/index.html"
		}
		f := files[p]
		switch {
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		case f == nil:
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.ctype)
		h.Set("ETag", f.etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("Vary", "Accept-Encoding")
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Header.Get("If-None-Match") == f.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		body := f.body
		if f.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			body = f.gz
		}
		h.Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method == http.MethodGet {
			w.Write(body)
		}
	}), nil
}

// acceptsGzip reads an Accept-Encoding header: gzip (or *) listed without
// q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// serveSite builds the page in place and serves it at addr until the
// process is interrupted; it returns the exit status.
func serveSite(addr string, stdout, stderr io.Writer) int {
	root, site, err := findSite(".")
	if err != nil {
		return failed(stderr, err)
	}
	fmt.Fprintf(stdout, "Building the page in %s …\n", site)
	if err := buildSite(root, site, site, stderr); err != nil {
		return failed(stderr, err)
	}
	h, err := siteHandler(site)
	if err != nil {
		return failed(stderr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return failed(stderr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(stdout, "The simulator is at http://%s/ (Ctrl-C stops it)\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return failed(stderr, err)
	}
	return 0
}

// buildSiteTo builds the page into dir for a static host; it returns the
// exit status.
func buildSiteTo(dir string, stdout, stderr io.Writer) int {
	root, site, err := findSite(".")
	if err != nil {
		return failed(stderr, err)
	}
	if err := buildSite(root, site, dir, stderr); err != nil {
		return failed(stderr, err)
	}
	fmt.Fprintf(stdout, "The page is in %s: serve its files from any static host (with application/wasm for %s).\n", dir, wasmFile)
	return 0
}
