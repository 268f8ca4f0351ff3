package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/page"
	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
)

// The goals the page is held to.
const (
	firstChartWithin = 2 * time.Second // on loopback
	maxServed        = 3 << 20         // bytes on the wire, gzip-compressed
	maxLoaded        = 10 << 20        // bytes once decompressed
	runTimeout       = 3 * time.Minute
)

func TestPageInChromium(t *testing.T) {
	b := openPage(t, chromium(t))
	t.Run("loads", func(t *testing.T) { checkLoad(t, b) })
	sections := eval[[]string](t, b, `[...document.querySelectorAll('section .sim')].map((s) => s.closest('section').id)`)
	if len(sections) < 6 {
		t.Fatalf("sections with a simulator: %v", sections)
	}
	for _, id := range sections {
		t.Run("section "+id, func(t *testing.T) { checkSection(t, b, id) })
	}
	t.Run("compare", func(t *testing.T) { checkComparison(t, b) })
	t.Run("keyboard", func(t *testing.T) { checkKeyboard(t, b, sections[0]) })
	t.Run("phone", func(t *testing.T) { checkPhone(t, b) })
	t.Run("offline", func(t *testing.T) { checkOffline(t, b, sections[0]) })
}

// checkLoad opens the page and measures it: the time to its first chart,
// the median of five loads each in a fresh browser context (no cache, no
// service worker yet) as the machine is shared (one slow compile of the
// simulator moved a median of three past the bound once); and what it loaded, on the
// wire and decompressed.
func checkLoad(t *testing.T, b *browser) {
	var firsts []float64
	for range 5 {
		firsts = append(firsts, firstChart(t, b))
	}
	slices.Sort(firsts)
	t.Logf("first chart drawn %.0f ms after the navigation started (median of %.0f ms)", firsts[len(firsts)/2], firsts)
	if median := firsts[len(firsts)/2]; median > float64(firstChartWithin.Milliseconds()) {
		t.Errorf("first chart after %.0f ms (median of %.0f); want within %v", median, firsts, firstChartWithin)
	}
	b.do(t, time.Minute, chromedp.Navigate(b.url))
	b.waitFor(t, 30*time.Second, `document.body.dataset.ready === 'true'`)
	type resource struct {
		Name    string  `json:"name"`
		Encoded float64 `json:"encoded"`
		Decoded float64 `json:"decoded"`
	}
	loaded := eval[[]resource](t, b, `[...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
		.map((e) => ({name: e.name, encoded: e.encodedBodySize, decoded: e.decodedBodySize}))`)
	var served, decoded float64
	for _, r := range loaded {
		served += r.Encoded
		decoded += r.Decoded
		t.Logf("%s: %.0f bytes served, %.0f decoded", r.Name, r.Encoded, r.Decoded)
		if strings.HasSuffix(r.Name, "/sim.wasm") && !(r.Encoded > 0 && r.Encoded < r.Decoded/2) {
			t.Errorf("sim.wasm: %.0f bytes served for %.0f: want it served compressed", r.Encoded, r.Decoded)
		}
	}
	t.Logf("the page and all it loads: %.2f MB served, %.2f MB decoded", served/(1<<20), decoded/(1<<20))
	if served > maxServed || decoded > maxLoaded {
		t.Errorf("%.0f bytes served, %.0f decoded; want at most %d and %d", served, decoded, maxServed, maxLoaded)
	}
	if len(loaded) < 5 {
		t.Errorf("the page loaded %d resources: %v", len(loaded), loaded)
	}
	b.noConsoleErrors(t)
}

// firstChart opens the page in a browser context of its own and returns
// when its first chart was drawn, in milliseconds from the navigation.
func firstChart(t *testing.T, b *browser) float64 {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	fresh := &browser{ctx: ctx}
	go b.watchConsole(chromedp.Console(ctx))
	fresh.do(t, time.Minute, chromedp.Navigate(b.url))
	fresh.waitFor(t, 30*time.Second, `document.body.dataset.ready === 'true'`)
	first := eval[float64](t, fresh, `performance.getEntriesByName('first-chart')[0].startTime`)
	t.Logf("first chart drawn %.0f ms after the navigation started (%s)", first,
		eval[string](t, fresh, `[...performance.getEntriesByType('mark').map((m) => m.name + ' ' + m.startTime.toFixed(0)),
			...performance.getEntriesByType('resource').map((r) => r.name.replace(/.*\//, '') + ' ' + r.startTime.toFixed(0) + '–' + r.responseEnd.toFixed(0))].join(', ')`))
	return first
}

// checkSection runs a section's panel as it stands at top speed to its end,
// and holds its tiles to the command's figures and to the simulator's
// run natively; then clicks each "try these" button, checks the controls
// it set, and runs that too.
func checkSection(t *testing.T, b *browser, id string) {
	sel := "#" + id + " .sim"
	b.do(t, time.Minute, chromedp.ScrollIntoView(chromedp.CSS(sel)))
	runToEnd(t, b, sel, true)
	b.screenshot(t, sel+" .view", id)
	tries := eval[[]string](t, b, fmt.Sprintf(`[...document.querySelectorAll('#%s .try button')].map((b) => b.textContent)`, id))
	if len(tries) < 2 {
		t.Errorf("%d try-these buttons: %v", len(tries), tries)
	}
	for i, name := range tries {
		button := fmt.Sprintf("#%s .try li:nth-child(%d) button", id, i+1)
		b.do(t, time.Minute, chromedp.Click(chromedp.CSS(button)))
		checkTryControls(t, b, id, button, name)
		runToEnd(t, b, sel, false)
	}
	b.noConsoleErrors(t)
}

// runToEnd runs the panel sel at top speed to its end (from the start when
// restart is set) and compares its tiles.
func runToEnd(t *testing.T, b *browser, sel string, restart bool) {
	t.Helper()
	b.do(t, time.Minute, chromedp.SetValue(chromedp.CSS(sel+" .speed-select"), "max"))
	if restart {
		b.do(t, time.Minute, chromedp.Click(chromedp.CSS(sel+" .reset")))
	}
	b.waitFor(t, runTimeout, fmt.Sprintf(`['done', 'invalid', 'error'].includes(document.querySelector(%q).dataset.state)`, sel))
	if state := eval[string](t, b, fmt.Sprintf(`document.querySelector(%q).dataset.state`, sel)); state != "done" {
		t.Fatalf("%s: %s: %s", sel, state, eval[string](t, b, fmt.Sprintf(`document.querySelector('%s .error').textContent`, sel)))
	}
	tiles := eval[map[string]string](t, b, fmt.Sprintf(`Object.fromEntries([...document.querySelectorAll('%s .tile')]
		.map((e) => [e.dataset.tile, e.querySelector('.tile-value').textContent]))`, sel))
	flags := eval[[]string](t, b, fmt.Sprintf(`JSON.parse(document.querySelector(%q).dataset.flags)`, sel))
	var settings page.Settings
	if err := json.Unmarshal([]byte(eval[string](t, b, fmt.Sprintf(`document.querySelector(%q).dataset.settings`, sel))), &settings); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %v after %v", sel, tiles, flags)
	tilesAreTheCommands(t, tiles, flags)
	tilesAreTheSimulators(t, tiles, settings)
}

// tilesAreTheCommands holds the tiles to the row the command prints for
// the panel's flags: its 429s, its p95 wait, its rejected and gave up.
func tilesAreTheCommands(t *testing.T, tiles map[string]string, flags []string) {
	t.Helper()
	code, out, errs := runCmd(t, append(slices.Clone(flags), "-format", "markdown")...)
	if code != 0 {
		t.Fatalf("headroom-sim %v: exit %d: %s", flags, code, errs)
	}
	_, rows := markdownTable(out)
	if len(rows) != 2 {
		t.Fatalf("headroom-sim %v printed %d rows:\n%s", flags, len(rows)-1, out)
	}
	row := map[string]string{}
	for i, h := range rows[0] {
		row[h] = rows[1][i]
	}
	rejected, gaveUp := atoiThousands(t, row["Rejected"]), atoiThousands(t, row["Gave up"])
	want := map[string]string{"Throttled": row["429s"], "p95 wait": row["p95 wait"], "Rejected or gave up": table.Thousands(rejected + gaveUp)}
	for name, w := range want {
		if tiles[name] != w {
			t.Errorf("tile %q = %q; headroom-sim %s prints %q", name, tiles[name], strings.Join(flags, " "), w)
		}
	}
}

// tilesAreTheSimulators holds every tile to the same run made here, on
// this machine's architecture, by the package the page runs as WebAssembly.
func tilesAreTheSimulators(t *testing.T, tiles map[string]string, s page.Settings) {
	t.Helper()
	l, err := page.Start(s)
	if err != nil {
		t.Fatal(err)
	}
	l.Advance(1e9)
	f := l.Frame(0)
	for _, tile := range f.Tiles {
		if tiles[tile.Name] != tile.Value {
			t.Errorf("tile %q = %q; the same run here gives %q", tile.Name, tiles[tile.Name], tile.Value)
		}
	}
	if len(tiles) != len(f.Tiles) {
		t.Errorf("%d tiles on the page, %d here", len(tiles), len(f.Tiles))
	}
}

// checkTryControls reads the panel's controls after a try button and holds
// them to what the button says it sets over the section's own settings;
// the named steps of the specification are checked by name too.
func checkTryControls(t *testing.T, b *browser, id, button, name string) {
	t.Helper()
	type try struct {
		Mode    string             `json:"mode"`
		World   map[string]any     `json:"world"`
		Options map[string]float64 `json:"options"`
		Speed   string             `json:"speed"`
	}
	var tr try
	if err := json.Unmarshal([]byte(eval[string](t, b, fmt.Sprintf(`document.querySelector(%q).dataset.try`, button))), &tr); err != nil {
		t.Fatal(err)
	}
	sel := "#" + id + " .sim"
	got := eval[map[string]string](t, b, fmt.Sprintf(`(() => {
		const p = document.querySelector(%q), out = {mode: p.querySelector('[name=mode]').value, speed: p.querySelector('.speed-select').value,
			watch: p.querySelector('.watch-now').textContent};
		for (const e of p.querySelectorAll('.world-fields [name]')) out[e.name] = e.value;
		for (const e of p.querySelectorAll('[data-option]')) out['option ' + e.dataset.option] = e.value;
		return out; })()`, sel))
	base := eval[map[string]any](t, b, fmt.Sprintf(`({mode: document.querySelector(%q).dataset.mode, ...JSON.parse(document.querySelector(%q).dataset.world || '{}')})`, sel, sel))
	want := map[string]string{"mode": cmpOr(tr.Mode, base["mode"].(string))}
	world := map[string]any{}
	d, _ := json.Marshal(page.DefaultWorld())
	json.Unmarshal(d, &world)
	maps.Copy(world, base)
	maps.Copy(world, tr.World)
	for k, v := range world {
		if k != "mode" {
			want[k] = fmt.Sprint(v)
		}
	}
	for k, v := range tr.Options {
		want["option "+k] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	if tr.Speed != "" {
		want["speed"] = tr.Speed
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q: control %s = %q; want %q", name, k, got[k], w)
		}
	}
	if !strings.HasPrefix(got["watch"], name+":") || len(got["watch"]) < len(name)+20 {
		t.Errorf("%q: the panel says %q; want what to watch", name, got["watch"])
	}
	for step, control := range map[string][2]string{
		"Bigger steps (IncreaseStep 600)": {"option IncreaseStep", "600"},
		"Maximum below the quota":         {"option MaxUnitsPerMinute", "2700"},
		"Quota drop":                      {"scenario", "drop"},
		"A noisy neighbor":                {"scenario", "drop"},
		"One more instance":               {"scenario", "join"},
		"No limiter":                      {"mode", "no limiter"},
		"The first seconds":               {"speed", "1"},
	} {
		if name == step && got[control[0]] != control[1] {
			t.Errorf("%q: %s = %q; want %q", name, control[0], got[control[0]], control[1])
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// checkComparison runs the comparison of the modes on the page and holds it
// to the command's table for the flags it shows, cell for cell: first as
// the page opens it (the command's defaults), then against another server.
func checkComparison(t *testing.T, b *browser) {
	b.do(t, time.Minute, chromedp.ScrollIntoView(chromedp.CSS("#compare .comparison")))
	b.waitFor(t, runTimeout, `document.querySelector('#compare .comparison').dataset.state === 'done'`)
	comparisonIsTheCommands(t, b)
	b.screenshot(t, "#compare .results", "compare")
	for name, value := range map[string]string{"server": "token-bucket", "window": "1", "quota": "50", "publish": "draft-6", "scenario": "steady", "burst": "20"} {
		b.do(t, time.Minute, chromedp.SetValue(chromedp.CSS(fmt.Sprintf("#compare [name=%s]", name)), value))
	}
	b.do(t, time.Minute, chromedp.Click(chromedp.CSS("#compare button.run")))
	b.waitFor(t, runTimeout, `document.querySelector('#compare .comparison').dataset.state === 'done'`)
	comparisonIsTheCommands(t, b)
	b.noConsoleErrors(t)
}

func comparisonIsTheCommands(t *testing.T, b *browser) {
	t.Helper()
	type shown struct {
		Title  string     `json:"title"`
		Rows   [][]string `json:"rows"`
		Note   string     `json:"note"`
		Footer string     `json:"footer"`
		Flags  []string   `json:"flags"`
	}
	page := eval[shown](t, b, `(() => { const c = document.querySelector('#compare .comparison');
		return {title: c.querySelector('caption').textContent, note: c.querySelector('.note').textContent,
			footer: c.querySelector('.footer').textContent, flags: JSON.parse(c.dataset.flags),
			rows: [...c.querySelectorAll('table tr')].map((r) => [...r.cells].map((x) => x.textContent))}; })()`)
	code, out, errs := runCmd(t, append(slices.Clone(page.Flags), "-format", "markdown")...)
	if code != 0 {
		t.Fatalf("headroom-sim %v: exit %d: %s", page.Flags, code, errs)
	}
	title, rows := markdownTable(out)
	if page.Title != title {
		t.Errorf("the page's title %q; headroom-sim %v prints %q", page.Title, page.Flags, title)
	}
	if !slices.EqualFunc(page.Rows, rows, slices.Equal[[]string]) {
		t.Errorf("the page's table:\n%v\nheadroom-sim %s prints:\n%v", page.Rows, strings.Join(page.Flags, " "), rows)
	}
	if !strings.Contains(out, page.Footer) || (page.Note != "" && !strings.Contains(out, page.Note)) {
		t.Errorf("the page's note %q and footer %q are not the command's:\n%s", page.Note, page.Footer, out)
	}
	t.Logf("the page's table is headroom-sim %s, %d rows", strings.Join(page.Flags, " "), len(rows)-1)
}

// markdownTable reads the command's Markdown output: its title line and
// the table's rows (the header first).
func markdownTable(out string) (title string, rows [][]string) {
	lines := strings.Split(out, "\n")
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "|") || strings.HasPrefix(l, "|---") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(l, "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return lines[0], rows
}

func atoiThousands(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// checkKeyboard goes through the first section with the Tab key alone:
// every control of its panel and every try button takes the focus in turn,
// and the Start button works from the keyboard.
func checkKeyboard(t *testing.T, b *browser, id string) {
	eval[chromedp.Void](t, b, fmt.Sprintf(`document.querySelector('#%s .play').focus(); document.activeElement.blur();
		document.querySelector('#%s').scrollIntoView()`, id, id))
	controls := eval[[]string](t, b, fmt.Sprintf(`[...document.querySelectorAll('#%s :is(button, select, input, summary)')]
		.filter((e) => e.offsetParent !== null).map((e) => e.id || e.className || e.textContent.trim())`, id))
	focused := map[string]bool{}
	for range 200 {
		b.do(t, time.Minute, chromedp.KeyEvent(kb.Tab))
		where := eval[string](t, b, fmt.Sprintf(`(() => { const e = document.activeElement;
			return e && e.closest('#%s') ? (e.id || e.className || e.textContent.trim()) : '' })()`, id))
		if where == "" && len(focused) > 0 {
			break
		}
		focused[where] = true
	}
	t.Logf("the Tab key went through %d controls of #%s", len(focused), id)
	if len(controls) < 15 {
		t.Errorf("#%s has %d controls: %v", id, len(controls), controls)
	}
	for _, c := range controls {
		if !focused[c] {
			t.Errorf("the Tab key never reaches %q of #%s (it reached %d of %d)", c, id, len(focused), len(controls))
		}
	}
	state := eval[string](t, b, fmt.Sprintf(`document.querySelector('#%s .play').focus(); document.querySelector('#%s .sim').dataset.state`, id, id))
	b.do(t, time.Minute, chromedp.KeyEvent(kb.Enter))
	after := eval[string](t, b, fmt.Sprintf(`document.querySelector('#%s .sim').dataset.state`, id))
	if after == state {
		t.Errorf("Enter on the Start button left the panel %q", state)
	}
	b.noConsoleErrors(t)
}

// checkPhone lays the page out at a phone's width: nothing is wider than
// the screen.
func checkPhone(t *testing.T, b *browser) {
	b.do(t, time.Minute, chromedp.EmulateViewport(390, 844), chromedp.Navigate(b.url))
	b.waitFor(t, 30*time.Second, `document.body.dataset.ready === 'true'`)
	wide := eval[[]string](t, b, `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1
		&& !e.closest('.scroll')).map((e) => e.tagName + '.' + e.className)`)
	width := eval[[]float64](t, b, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`)
	if len(wide) > 0 || width[0] > width[1] {
		t.Errorf("at 390 px the page is %v px wide, and these are wider than the screen: %v", width, wide)
	}
	sel := "main section:first-of-type .sim"
	runToEnd(t, b, sel, true)
	b.screenshot(t, sel+" .panel", "phone")
	b.do(t, time.Minute, chromedp.EmulateViewport(1280, 1000))
	b.noConsoleErrors(t)
}

// checkOffline stops the server, opens the page again, and runs a section:
// the service worker's copy is the page.
func checkOffline(t *testing.T, b *browser, id string) {
	b.waitFor(t, 30*time.Second, `navigator.serviceWorker.controller !== null`)
	b.server.Close()
	b.do(t, time.Minute, chromedp.Navigate(b.url))
	b.waitFor(t, 30*time.Second, `document.body.dataset.ready === 'true'`)
	sel := "#" + id + " .sim"
	b.do(t, time.Minute, chromedp.ScrollIntoView(chromedp.CSS(sel)))
	runToEnd(t, b, sel, true)
	b.noConsoleErrors(t)
}
