package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The page in a real browser: headless Chromium (Debian's chromium) against
// the page as -serve builds and serves it. It is slow (it builds the
// WebAssembly and runs every section to its end), so it runs only where
// HEADROOM_SITE_TEST=1 says so (.ci/run sets it); there, a Chromium that
// cannot be found fails the test under CI=true and skips it elsewhere.

// browser is the page open in a headless Chromium tab, and what it has
// written to its console.
type browser struct {
	ctx    context.Context
	url    string
	server *httptest.Server

	mu       sync.Mutex
	problems []string
	flushed  int        // the last console.debug mark the watcher has seen
	seen     *sync.Cond // signalled at each mark
}

// chromium finds the browser, or skips (fails under CI=true) saying why.
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("HEADROOM_SITE_TEST") != "1" {
		t.Skip("the browser test builds the page and drives Chromium: HEADROOM_SITE_TEST=1 runs it (.ci/run does)")
	}
	for _, name := range []string{os.Getenv("HEADROOM_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	why := "no Chromium on PATH (chromium, chromium-browser, google-chrome) and no HEADROOM_CHROMIUM: .ci/chromium.sh installs Debian's"
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// openPage builds the page into a temporary folder, serves it on loopback
// with -serve's handler, and opens it in Chromium at width × height.
func openPage(t *testing.T, chrome string) *browser {
	t.Helper()
	root, site, err := findSite(".")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := buildSite(root, site, out, testWriter{t}); err != nil {
		t.Fatal(err)
	}
	h, err := siteHandler(out)
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{server: httptest.NewServer(h)}
	b.url = b.server.URL + "/"
	t.Cleanup(b.server.Close)

	profile := filepath.Join(t.TempDir(), "profile")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox,
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 1000), chromedp.Flag("disable-gpu", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		chromedp.Cancel(ctx)
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatal(err)
	}
	b.ctx = ctx
	b.seen = sync.NewCond(&b.mu)
	go b.watchConsole(chromedp.Console(ctx))
	return b
}

// watchConsole keeps every error the page writes to its console: a call of
// console.error, an exception nothing caught, an error of the browser's log
// (a resource that failed to load).
func (b *browser) watchConsole(messages func(func(chromedp.ConsoleMessage, error) bool)) {
	for m, err := range messages {
		if err != nil {
			return
		}
		b.mu.Lock()
		var mark int
		switch {
		case m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException:
			b.problems = append(b.problems, m.String()+" at "+m.URL)
		case m.Type == chromedp.ConsoleDebug:
			if _, err := fmt.Sscanf(m.Text, "headroom-test-mark %d", &mark); err == nil {
				b.flushed = mark
				b.seen.Broadcast()
			}
		}
		b.mu.Unlock()
	}
}

// noConsoleErrors fails t with every console error since the last call.
func (b *browser) noConsoleErrors(t *testing.T) {
	t.Helper()
	// The console's messages reach the watcher in order through a queue of
	// their own: once a mark written now has come, every message before it
	// has.
	b.mu.Lock()
	mark := b.flushed + 1
	b.mu.Unlock()
	eval[chromedp.Void](t, b, fmt.Sprintf("console.debug('headroom-test-mark %d')", mark))
	stop := context.AfterFunc(b.ctx, func() { b.mu.Lock(); b.seen.Broadcast(); b.mu.Unlock() })
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.flushed < mark && b.ctx.Err() == nil {
		b.seen.Wait()
	}
	for _, p := range b.problems {
		t.Errorf("the browser's console: %s", p)
	}
	b.problems = nil
}

// do runs actions with a deadline of its own.
func (b *browser) do(t *testing.T, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page (awaiting a promise).
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds.
func (b *browser) waitFor(t *testing.T, timeout time.Duration, cond string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("waiting %v for %s: %v", timeout, cond, err)
	}
}

// screenshot saves a PNG of the element sel into the test's artifacts and,
// when HEADROOM_SCREENSHOTS names a folder, there too.
func (b *browser) screenshot(t *testing.T, sel, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", sel, err)
	}
	png = smallPNG(t, png)
	for _, dir := range []string{t.ArtifactDir(), os.Getenv("HEADROOM_SCREENSHOTS")} {
		if dir == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshot %s.png: %d bytes", name, len(png))
}

// testWriter writes a build's output to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// smallPNG re-encodes a screenshot as a paletted image at the best
// compression, so that the screenshots the docs keep stay small: its 256
// most frequent colours (a page is mostly a few flat ones), every other
// pixel (the edges of text and lines) drawn in the nearest of them.
func smallPNG(t *testing.T, b []byte) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	bounds := img.Bounds()
	count := map[color.NRGBA]int{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			count[color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)]++
		}
	}
	colours := slices.Collect(maps.Keys(count))
	slices.SortFunc(colours, func(a, b color.NRGBA) int {
		return cmp.Or(count[b]-count[a], cmp.Compare(a.R, b.R), cmp.Compare(a.G, b.G), cmp.Compare(a.B, b.B), cmp.Compare(a.A, b.A))
	})
	pal := color.Palette{}
	for _, c := range colours[:min(len(colours), 256)] {
		pal = append(pal, c)
	}
	p := image.NewPaletted(bounds, pal)
	index := map[color.NRGBA]uint8{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			p.SetColorIndex(x, y, i)
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
