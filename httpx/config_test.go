package httpx

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
)

const sampleConfig = `{
  "resilience": {"retries": 2, "timeout": "20s", "attemptTimeout": "5s",
                 "throttledBackoff": {"initial": "1s", "multiplier": 2, "jitter": 0.2, "max": "30s"}},
  "limiters": {
    "default": {"permitsPerSecond": 50},
    "github":  {"perWindow": {"permits": 5000, "window": "1h"}},
    "single":  {"permitsPerSecond": 1, "burst": 1},
    "bulk":    {"adaptiveRate": {"maxUnitsPerMinute": 1800}, "shared": true}
  },
  "rateLimit": "default",
  "hosts": {
    "api.github.com": {"rateLimit": "github"},
    "one.test":       {"rateLimit": "single"},
    "free.test":      {"rateLimit": "none"},
    "b1.test":        {"rateLimit": "bulk"},
    "b2.test":        {"rateLimit": "bulk"}
  },
  "quotaGuard": {"reserveFraction": 0.05, "maxRetryAfter": "2m"}
}`

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(sampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	if c.Resilience.Retries != 2 || time.Duration(c.Resilience.Timeout) != 20*time.Second {
		t.Errorf("resilience = %+v", c.Resilience)
	}
	if w := c.Limiters["github"].PerWindow; w == nil || w.Permits != 5000 || time.Duration(w.Window) != time.Hour {
		t.Errorf("github limiter = %+v", c.Limiters["github"])
	}
	if !c.Limiters["bulk"].Shared || c.Limiters["bulk"].AdaptiveRate == nil {
		t.Errorf("bulk limiter = %+v", c.Limiters["bulk"])
	}
	if *c.QuotaGuard.ReserveFraction != 0.05 {
		t.Errorf("quota guard = %+v", c.QuotaGuard)
	}
}

func TestConfigPerHostOverrides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := configTransport(t, sampleConfig)

		send := func(host string) error {
			resp, err := get(t, tr, "http://"+host+"/")
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		// one.test: one permit a second, so the second attempt is refused, and
		// the resilience layer waits (about a second) and gets it.
		if err := send("one.test"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := send("one.test"); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 500*time.Millisecond {
			t.Errorf("second request to one.test took %v, want about 1s of waiting", d)
		}
		// free.test: no limiter.
		for range 100 {
			if err := send("free.test"); err != nil {
				t.Fatal(err)
			}
		}
		// b1 and b2 share one limiter; everything else has its own.
		for _, h := range []string{"b1.test", "b2.test", "api.github.com", "x.test"} {
			if err := send(h); err != nil {
				t.Fatal(err)
			}
		}
		s := tr.hosts[0]
		s.mu.RLock()
		defer s.mu.RUnlock()
		if s.m["b1.test"].lim != s.m["b2.test"].lim || !s.m["b1.test"].shared {
			t.Error("b1.test and b2.test do not share the bulk limiter")
		}
		if s.m["free.test"].lim != nil {
			t.Error("free.test has a limiter")
		}
		if s.m["x.test"].lim == nil || s.m["x.test"].lim.Name() != "default" || s.m["api.github.com"].lim.Name() != "github" {
			t.Error("default or github limiter missing")
		}
	})
}

// The resilience settings compose with the preset as resilience's Option
// functions do: one setting alone is a working policy, and settings that
// conflict are refused when the configuration is read.
func TestConfigResilienceComposesWithPreset(t *testing.T) {
	for _, doc := range []string{
		`{"resilience": {"timeout": "2s"}}`,
		`{"resilience": {"attemptTimeout": "20s"}}`,
		`{"resilience": {"attemptTimeout": "1m"}}`,
		`{"resilience": {"backoff": {"initial": "1s"}}}`,
	} {
		c, err := ParseConfig([]byte(doc))
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		if _, err := newClientFrom(c); err != nil {
			t.Errorf("%s: NewClient: %v", doc, err)
		}
	}
	_, err := ParseConfig([]byte(`{"resilience": {"timeout": "2s", "attemptTimeout": "5s"}}`))
	if d := cmp.Diff([]string{"httpx: resilience.attemptTimeout = 5s: want at most timeout (2s)"}, messages(err)); d != "" {
		t.Errorf("conflicting timeouts (-want +got):\n%s", d)
	}
}

// messages lists the messages of the problems in err.
func messages(err error) []string {
	var out []string
	for _, e := range flatten(err) {
		out = append(out, e.Error())
	}
	return out
}

func TestConfigUnknownField(t *testing.T) {
	_, err := ParseConfig([]byte(`{"limiters": {"a": {"permitsPerSecnd": 5}}}`))
	if err == nil || !strings.Contains(err.Error(), "permitsPerSecnd") || !errors.Is(err, headroom.ErrConfig) {
		t.Fatalf("err = %v, want the unknown field named", err)
	}
	_, err = ParseConfig([]byte(`{"rateLimitt": "a"}`))
	if err == nil {
		t.Fatal("unknown top-level field accepted")
	}
	_, err = ParseConfig([]byte(`{} {}`))
	if err == nil {
		t.Fatal("trailing data accepted")
	}
}

func TestConfigEveryProblemListed(t *testing.T) {
	_, err := ParseConfig([]byte(`{
	  "resilience": {"backoff": {"jitter": 2}, "timeout": "1s", "attemptTimeout": "5s"},
	  "limiters": {
	    "two":   {"permitsPerSecond": 5, "concurrency": 3},
	    "none":  {"concurrency": 1},
	    "win":   {"perWindow": {"permits": 0, "window": "1m"}}
	  },
	  "rateLimit": "missing",
	  "hosts": {"a.test": {"rateLimit": "gone"}},
	  "quotaGuard": {"reserveFraction": 2}
	}`))
	if err == nil {
		t.Fatal("no error")
	}
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var le *headroom.ConfigError
		var re *headroom.ConfigError
		var ce *headroom.ConfigError
		switch {
		case errors.As(e, &le):
			fields = append(fields, le.Field)
		case errors.As(e, &re):
			fields = append(fields, re.Field)
		case errors.As(e, &ce):
			fields = append(fields, ce.Field)
		default:
			t.Errorf("untyped problem %T: %v", e, e)
		}
	}
	got := strings.Join(fields, "\n")
	for _, want := range []string{"resilience.backoff.jitter", "resilience.attemptTimeout", `limiters["two"]`,
		"limiters", `limiters["win"].perWindow.permits`, "rateLimit", `hosts["a.test"].rateLimit`, "quotaGuard.reserveFraction"} {
		if !strings.Contains(got, want) {
			t.Errorf("no problem reported for %s; got:\n%s", want, got)
		}
	}
}

func TestConfigDurationsAreStrings(t *testing.T) {
	if _, err := ParseConfig([]byte(`{"resilience": {"timeout": 60}}`)); err == nil {
		t.Error("a bare-number duration was accepted")
	}
}

func TestConfigGuardDisabled(t *testing.T) {
	c, err := ParseConfig([]byte(`{"quotaGuard": {"disabled": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	client, err := newClientFrom(c, WithTransport(rtFunc(ok200)))
	if err != nil {
		t.Fatal(err)
	}
	if g := client.Transport.(*Transport).guard; g != nil {
		t.Error("a disabled guard was built")
	}
	var _ http.RoundTripper = client.Transport
}

func TestConfigEveryUnknownFieldListed(t *testing.T) {
	_, err := ParseConfig([]byte(`{
	  "resilince": {},
	  "resilience": {"backoff": {"intial": "1s"}},
	  "limiters": {"a": {"permitsPerSecnd": 5, "PermitsPerSecond": 5, "perWindow": null}},
	  "hosts": {"a.test": {"ratelimit": "a", "limit": "a"}},
	  "quotaGuard": {"backoff": {"jiter": 0.1}}
	}`))
	if err == nil {
		t.Fatal("no error")
	}
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *headroom.ConfigError
		if !errors.As(e, &ce) {
			t.Errorf("problem %T is not a *headroom.ConfigError: %v", e, e)
			continue
		}
		fields = append(fields, ce.Field)
	}
	// Keys differing from a field's name only in case are problems too:
	// a configuration spells its keys exactly.
	want := []string{`hosts["a.test"].limit`, `hosts["a.test"].ratelimit`, `limiters["a"].PermitsPerSecond`,
		`limiters["a"].permitsPerSecnd`, "quotaGuard.backoff.jiter", "resilience.backoff.intial", "resilince"}
	if d := cmp.Diff(want, fields); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

// Every problem of a configuration is named by its JSON path, with one
// prefix and one "want" — type errors too, listed together with the
// problems Validate finds in the rest.
func TestConfigErrorsNameJSONPath(t *testing.T) {
	cases := []struct {
		json string
		want []string // the problems' messages
	}{
		{`{"resilience": {"timeout": 30}, "rateLimit": "zz"}`, []string{
			`httpx: resilience.timeout = 30: want a duration string such as "30s"`,
			`httpx: rateLimit = "zz": want the name of a limiter in limiters`,
		}},
		{`{"limiters": {"a": {"permitsPerSecond": "5", "perWindow": {"permits": 1.5, "window": "soon"}}},
		  "hosts": {"a.test": {"rateLimit": 7}}, "quotaGuard": {"queueLimit": "yes", "ttl": "1h"}}`, []string{
			`httpx: hosts["a.test"].rateLimit = 7: want a string`,
			`httpx: limiters["a"].perWindow.permits = 1.5: want a whole number`,
			`httpx: limiters["a"].perWindow.window = "soon": want a duration string such as "30s"`,
			`httpx: limiters["a"].permitsPerSecond = "5": want a number`,
			`httpx: quotaGuard.queueLimit = "yes": want a whole number`,
		}},
		{`{"resilience": [], "limiters": {"a": 1}, "hosts": "x"}`, []string{
			`httpx: hosts = "x": want an object`,
			`httpx: limiters["a"] = 1: want an object`,
			`httpx: resilience = []: want an object`,
		}},
		// Validate's problems name the fields as the JSON does.
		{`{"resilience": {"throttledBackoff": {"initial": "2s", "max": "1s"}, "timeout": "1s", "attemptTimeout": "5s"},
		  "limiters": {"two": {"permitsPerSecond": 5, "burst": -1, "concurrency": 3}}}`, []string{
			`httpx: resilience.attemptTimeout = 5s: want at most timeout (1s)`,
			`httpx: resilience.throttledBackoff.max = 1s: want at least initial (2s)`,
			`httpx: limiters["two"] = [permitsPerSecond concurrency]: want exactly one shape; the others would silently lose`,
			`httpx: limiters["two"].burst = -1: want 0 (1) up to 1e9`,
		}},
		// A host key that is no host at all is refused, not left to match
		// nothing.
		{`{"hosts": {"[::1": {}, "a b": {}, "[::1]:8080": {}}}`, []string{
			`httpx: hosts["[::1"] = not a host: want a host name or address, with its port when it is not the scheme's default, as in "api.example.com", "localhost:8080" or "[::1]:8080"`,
			`httpx: hosts["a b"] = not a host: want a host name or address, with its port when it is not the scheme's default, as in "api.example.com", "localhost:8080" or "[::1]:8080"`,
		}},
		{`{"resilience": {`, []string{`httpx: line 1, column 17 = unexpected end of JSON input: want a JSON object`}},
		{"{\n  \"rateLimit\": \"a\",,\n}", []string{
			`httpx: line 2, column 20 = invalid character ',' looking for beginning of object key string: want a JSON object`}},
		{`{} {}`, []string{`httpx: line 1, column 4 = data after the configuration: want one JSON object`}},
		{`[]`, []string{`httpx: configuration = []: want an object`}},
		{`{"configuration": 1, "rateLimit": "zz"}`, []string{
			`httpx: configuration = an unknown field: want one of hosts, limiters, quotaGuard, rateLimit, resilience`,
			`httpx: rateLimit = "zz": want the name of a limiter in limiters`,
		}},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.json))
		if err == nil {
			t.Errorf("%s: no error", c.json)
			continue
		}
		var got []string
		for _, e := range flatten(err) {
			got = append(got, e.Error())
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s: problems (-want +got):\n%s", c.json, d)
		}
	}
}

// A problem inside a value that could not be read is not reported again
// by Validate as a missing or zero setting.
func TestConfigTypeErrorNotReportedTwice(t *testing.T) {
	_, err := ParseConfig([]byte(`{"limiters": {"a": {"permitsPerSecond": "x"}}, "rateLimit": "a"}`))
	if got := len(flatten(err)); got != 1 {
		t.Errorf("%d problems, want only the type error: %v", got, err)
	}
}

// "disabled": true with guard settings beside it is a contradiction: the
// settings would be silently ignored.
func TestConfigGuardDisabledWithSettings(t *testing.T) {
	_, err := ParseConfig([]byte(`{"quotaGuard": {"disabled": true, "reserveFraction": 0.5, "maxWait": "1s"}}`))
	var fields []string
	for _, e := range flatten(err) {
		if ce, ok := errors.AsType[*headroom.ConfigError](e); ok {
			fields = append(fields, ce.Field)
		}
	}
	if d := cmp.Diff([]string{"quotaGuard.reserveFraction", "quotaGuard.maxWait"}, fields); d != "" {
		t.Errorf("problems (-want +got):\n%s\n%v", d, err)
	}
}

// Hosts keys match as request hosts do: without regard to case, and with a
// scheme's default port the same as none. A key with a scheme or a path is
// refused, saying what to write instead.
func TestConfigHostKeys(t *testing.T) {
	tr := configTransport(t, `{"limiters": {"single": {"permitsPerSecond": 1, "burst": 1}},
	  "hosts": {"One.Test": {"rateLimit": "single"}, "two.test:443": {"rateLimit": "single"}}}`)
	for _, pair := range [][2]string{{"http://one.test/", "http://ONE.TEST:80/"}, {"https://two.test/", "https://Two.Test:443/"}} {
		resp, err := get(t, tr, pair[0])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, err := getWithin(t, tr, pair[1], 100*time.Millisecond); !errors.Is(err, limit.ErrRateLimited) {
			t.Errorf("%s after %s = %v; want refused by the host's one limiter", pair[1], pair[0], err)
		}
	}

	_, err := ParseConfig([]byte(`{"hosts": {"https://API.github.com": {}, "api.github.com/repos": {},
	  "http://example.com:8080/x": {}, "a.test": {}, "A.TEST:80": {}}}`))
	var got []string
	for _, e := range flatten(err) {
		got = append(got, e.Error())
	}
	want := []string{
		`httpx: hosts["a.test"] = the same host as "A.TEST:80": want one entry per host`,
		`httpx: hosts["api.github.com/repos"] = a path: want the host alone, as in "api.github.com"`,
		`httpx: hosts["http://example.com:8080/x"] = a URL: want the host alone, as in "example.com:8080"`,
		`httpx: hosts["https://API.github.com"] = a URL: want the host alone, as in "api.github.com"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

// An IPv6 Hosts key is bracketed as in a URL, and without a port it covers
// the address's other ports, as a host name's does; a key with a port is
// the more specific. An unbracketed address is refused: it could not be
// told from a port ("::1:80") and matches no request's host.
func TestConfigIPv6HostKeys(t *testing.T) {
	tr := configTransport(t, `{"limiters": {"single": {"permitsPerSecond": 1, "burst": 1}},
	  "hosts": {"[::1]": {"rateLimit": "single"}, "[::2]:8080": {"rateLimit": "single"}, "[::1]:9090": {"rateLimit": "none"}}}`)
	for _, u := range []string{"http://[::1]/", "http://[::1]:8080/", "http://[::2]:8080/"} {
		resp, err := get(t, tr, u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		resp.Body.Close()
		if _, err := getWithin(t, tr, u, 100*time.Millisecond); !errors.Is(err, limit.ErrRateLimited) {
			t.Errorf("second request to %s = %v; want refused by the host's limiter", u, err)
		}
	}
	for range 3 {
		resp, err := get(t, tr, "http://[::1]:9090/")
		if err != nil {
			t.Fatalf("[::1]:9090, without a limiter: %v", err)
		}
		resp.Body.Close()
	}

	_, err := ParseConfig([]byte(`{"hosts": {"::1": {}, "FE80::1:8080": {}, "http://[::1]:8080/x": {}}}`))
	var got []string
	for _, e := range flatten(err) {
		got = append(got, e.Error())
	}
	want := []string{
		`httpx: hosts["::1"] = an IPv6 address without brackets: want the address in brackets, as in "[::1]"`,
		`httpx: hosts["FE80::1:8080"] = an IPv6 address without brackets: want the address in brackets, as in "[fe80::1:8080]"`,
		`httpx: hosts["http://[::1]:8080/x"] = a URL: want the host alone, as in "[::1]:8080"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

// A request's host never carries userinfo, so a Hosts key with a user
// would match nothing: it is refused, and the host suggested instead
// leaves the user and password out.
func TestConfigHostKeyUserinfoRefused(t *testing.T) {
	_, err := ParseConfig([]byte(`{"hosts": {"user@api.test": {}, "https://user:secret@API.test/": {},
	  "me@[::1]:8080": {}, "api.test/@x": {}}}`))
	var got []string
	for _, e := range flatten(err) {
		got = append(got, e.Error())
	}
	want := []string{
		`httpx: hosts["api.test/@x"] = a path: want the host alone, as in "api.test"`,
		`httpx: hosts["https://user:secret@API.test/"] = a URL: want the host alone, as in "api.test"`,
		`httpx: hosts["me@[::1]:8080"] = userinfo: want the host alone, as in "[::1]:8080"`,
		`httpx: hosts["user@api.test"] = userinfo: want the host alone, as in "api.test"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

// configTransport is the transport of a client built from the JSON config,
// over a base that answers 200, without the quota guard; closed at the
// test's end.
func configTransport(t *testing.T, config string) *Transport {
	t.Helper()
	c, err := ParseConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	client, err := newClientFrom(c, WithTransport(rtFunc(ok200)), WithoutQuotaGuard())
	if err != nil {
		t.Fatal(err)
	}
	tr := client.Transport.(*Transport)
	t.Cleanup(func() { tr.Close() })
	return tr
}

// newClientFrom builds the client c describes, with more options after
// c's own.
func newClientFrom(c *Config, more ...Option) (*http.Client, error) {
	opts, err := c.Options()
	if err != nil {
		return nil, err
	}
	return NewClient(append(opts, more...)...)
}

// flatten lists the problems in err: those of an errors.Join, or err alone.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// A zero resilience setting keeps the preset's value, as every zero field
// of resilience.Options does; below zero it turns the setting off.
func TestConfigResilienceZeroKeepsThePreset(t *testing.T) {
	for _, c := range []struct {
		json string
		want int // attempts made against a server that always fails
	}{
		{`{"resilience": {"retries": 0, "backoff": {"initial": "1ms"}, "noBreaker": true, "noBudget": true}, "quotaGuard": {"disabled": true}}`, 4},
		{`{"resilience": {"retries": -1, "noBreaker": true, "noBudget": true}, "quotaGuard": {"disabled": true}}`, 1},
	} {
		cfg, err := ParseConfig([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		opts, err := cfg.Options()
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		synctest.Test(t, func(t *testing.T) {
			var calls atomic.Int64
			base := rtFunc(func(*http.Request) (*http.Response, error) {
				calls.Add(1)
				return nil, errors.New("connection reset")
			})
			client, err := NewClient(append(opts, WithTransport(base))...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.Get("http://api.test/"); err == nil {
				t.Fatal("no error from a server that always fails")
			}
			if got := calls.Load(); got != int64(c.want) {
				t.Errorf("%s: %d attempts; want %d", c.json, got, c.want)
			}
		})
	}
}
