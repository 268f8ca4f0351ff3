package quota

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// t0 is the test's "now": the response Date and the time it is read.
var t0 = time.Date(2025, 8, 21, 12, 40, 0, 0, time.UTC)

func epoch(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }

type hdr [][2]string

// serve runs every case's headers through a real HTTP exchange: a handler
// writes them (as the service would, in its own case), the client reads
// resp.Header. It returns the headers as the client saw them.
func serve(t *testing.T, cases []hdr, status int) []http.Header {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(r.URL.Query().Get("i"))
		w.Header().Set("Date", t0.Format(http.TimeFormat))
		for _, kv := range cases[i] {
			w.Header().Add(kv[0], kv[1])
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	out := make([]http.Header, len(cases))
	for i := range cases {
		resp, err := srv.Client().Get(srv.URL + "/?i=" + strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		out[i] = resp.Header
	}
	return out
}

type parseCase struct {
	name string
	h    hdr
	want []Quota // ParseAll; Parse must return the one at pick
	pick int
}

func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	hs := make([]hdr, len(cases))
	for i, c := range cases {
		hs[i] = c.h
	}
	got := serve(t, hs, http.StatusOK)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			all := parseAll(got[i], t0, nil)
			if diff := cmp.Diff(c.want, all, cmpopts.IgnoreUnexported(Quota{})); diff != "" {
				t.Errorf("ParseAll (-want +got):\n%s", diff)
			}
			q, ok := Parse(got[i], t0)
			if ok != (len(c.want) > 0) {
				t.Fatalf("Parse ok = %v, want %v", ok, len(c.want) > 0)
			}
			if ok {
				if diff := cmp.Diff(c.want[c.pick], q, cmpopts.IgnoreUnexported(Quota{})); diff != "" {
					t.Errorf("Parse (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestParseGitHub(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "core", h: hdr{
			{"x-ratelimit-limit", "5000"}, {"x-ratelimit-remaining", "4999"}, {"x-ratelimit-used", "1"},
			{"x-ratelimit-reset", epoch(time.Hour)}, {"x-ratelimit-resource", "core"},
		}, want: []Quota{{Dialect: github, Policy: "core", Unit: "requests", Limit: 5000, Remaining: 4999, Reset: t0.Add(time.Hour), Window: time.Hour, Key: "core"}}},
		{name: "primary exhausted (403)", h: hdr{
			{"x-ratelimit-limit", "60"}, {"x-ratelimit-remaining", "0"}, {"x-ratelimit-used", "60"},
			{"x-ratelimit-reset", epoch(1234 * time.Second)}, {"x-ratelimit-resource", "core"},
		}, want: []Quota{{Dialect: github, Policy: "core", Unit: "requests", Limit: 60, Remaining: 0, Reset: t0.Add(1234 * time.Second), Window: time.Hour, Key: "core"}}},
		{name: "search resource", h: hdr{
			{"x-ratelimit-limit", "30"}, {"x-ratelimit-remaining", "18"}, {"x-ratelimit-used", "12"},
			{"x-ratelimit-reset", epoch(40 * time.Second)}, {"x-ratelimit-resource", "search"},
		}, want: []Quota{{Dialect: github, Policy: "search", Unit: "requests", Limit: 30, Remaining: 18, Reset: t0.Add(40 * time.Second), Window: time.Minute, Key: "search"}}},
		{name: "reset already past", h: hdr{
			{"x-ratelimit-limit", "5000"}, {"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", epoch(-3 * time.Second)}, {"x-ratelimit-used", "5000"},
		}, want: []Quota{{Dialect: github, Unit: "requests", Limit: 5000, Reset: t0, Window: time.Hour}}},
	})
}

func TestParseXTwitter(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "15-minute window", h: hdr{
			{"x-rate-limit-limit", "900"}, {"x-rate-limit-remaining", "899"}, {"x-rate-limit-reset", epoch(15 * time.Minute)},
		}, want: []Quota{{Dialect: xRateLimitDashed, Unit: "requests", Limit: 900, Remaining: 899, Reset: t0.Add(15 * time.Minute), Window: 15 * time.Minute}}},
		{name: "24-hour app cap binds", h: hdr{
			{"x-rate-limit-limit", "900"}, {"x-rate-limit-remaining", "899"}, {"x-rate-limit-reset", epoch(15 * time.Minute)},
			{"x-app-limit-24hour-limit", "17"}, {"x-app-limit-24hour-remaining", "0"}, {"x-app-limit-24hour-reset", epoch(20 * time.Hour)},
		}, pick: 1, want: []Quota{
			{Dialect: xRateLimitDashed, Unit: "requests", Limit: 900, Remaining: 899, Reset: t0.Add(15 * time.Minute), Window: 15 * time.Minute},
			{Dialect: xRateLimitDashed, Policy: "app-24hour", Unit: "requests", Limit: 17, Remaining: 0, Reset: t0.Add(20 * time.Hour), Window: 24 * time.Hour},
		}},
	})
}

func TestParseDiscord(t *testing.T) {
	ra := 64570 * time.Millisecond
	runParseCases(t, []parseCase{
		{name: "reset-after preferred", h: hdr{
			{"X-RateLimit-Limit", "5"}, {"X-RateLimit-Remaining", "0"},
			{"X-RateLimit-Reset", epoch(ra) + ".570"}, {"X-RateLimit-Reset-After", "64.57"},
			{"X-RateLimit-Bucket", "abcd1234"},
		}, want: []Quota{{Dialect: discord, Unit: "requests", Limit: 5, Remaining: 0, Reset: t0.Add(ra), Key: "abcd1234"}}},
		{name: "fractional epoch reset", h: hdr{
			{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "9"}, {"X-RateLimit-Reset", epoch(time.Second) + ".123"},
			{"X-RateLimit-Bucket", "abcd1234"},
		}, want: []Quota{{Dialect: discord, Unit: "requests", Limit: 10, Remaining: 9, Reset: t0.Add(1123 * time.Millisecond), Key: "abcd1234"}}},
	})
}

func TestParseXRateLimitResetUnits(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "delta seconds", h: hdr{{"X-RateLimit-Limit", "100"}, {"X-RateLimit-Remaining", "42"}, {"X-RateLimit-Reset", "30"}},
			want: []Quota{{Dialect: xRateLimit, Unit: "requests", Limit: 100, Remaining: 42, Reset: t0.Add(30 * time.Second)}}},
		{name: "epoch milliseconds", h: hdr{{"X-RateLimit-Limit", "100"}, {"X-RateLimit-Remaining", "42"},
			{"X-RateLimit-Reset", strconv.FormatInt(t0.Add(2500*time.Millisecond).UnixMilli(), 10)}},
			want: []Quota{{Dialect: xRateLimit, Unit: "requests", Limit: 100, Remaining: 42, Reset: t0.Add(2500 * time.Millisecond)}}},
		{name: "malformed remaining", h: hdr{{"X-RateLimit-Limit", "100"}, {"X-RateLimit-Remaining", "-1"}}},
		{name: "malformed reset kept out", h: hdr{{"X-RateLimit-Remaining", "7"}, {"X-RateLimit-Reset", "soon"}},
			want: []Quota{{Dialect: xRateLimit, Unit: "requests", Remaining: 7}}},
		{name: "served from cache", h: hdr{{"Age", "12"}, {"X-RateLimit-Remaining", "7"}}},
	})
}

func TestParseOpenAI(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "requests and tokens", h: hdr{
			{"x-ratelimit-limit-requests", "60"}, {"x-ratelimit-limit-tokens", "150000"},
			{"x-ratelimit-remaining-requests", "59"}, {"x-ratelimit-remaining-tokens", "149984"},
			{"x-ratelimit-reset-requests", "1s"}, {"x-ratelimit-reset-tokens", "6m0s"},
		}, pick: 0, want: []Quota{
			{Dialect: openAI, Policy: "requests", Unit: "requests", Limit: 60, Remaining: 59, Reset: t0.Add(time.Second), Window: time.Minute},
			{Dialect: openAI, Policy: "tokens", Unit: "tokens", Limit: 150000, Remaining: 149984, Reset: t0.Add(6 * time.Minute), Window: time.Minute},
		}},
		{name: "tokens bind", h: hdr{
			{"x-ratelimit-limit-requests", "5000"}, {"x-ratelimit-limit-tokens", "40000"},
			{"x-ratelimit-remaining-requests", "4999"}, {"x-ratelimit-remaining-tokens", "312"},
			{"x-ratelimit-reset-requests", "12ms"}, {"x-ratelimit-reset-tokens", "1.5s"},
		}, pick: 1, want: []Quota{
			{Dialect: openAI, Policy: "requests", Unit: "requests", Limit: 5000, Remaining: 4999, Reset: t0.Add(12 * time.Millisecond), Window: time.Minute},
			{Dialect: openAI, Policy: "tokens", Unit: "tokens", Limit: 40000, Remaining: 312, Reset: t0.Add(1500 * time.Millisecond), Window: time.Minute},
		}},
		{name: "azure seconds and -1", h: hdr{
			{"x-ratelimit-remaining-requests", "-1"}, {"x-ratelimit-remaining-tokens", "900"}, {"x-ratelimit-reset-tokens", "5"},
		}, want: []Quota{{Dialect: openAI, Policy: "tokens", Unit: "tokens", Remaining: 900, Reset: t0.Add(5 * time.Second), Window: time.Minute}}},
	})
}

func TestParseAnthropic(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "four buckets", h: hdr{
			{"anthropic-ratelimit-requests-limit", "50"}, {"anthropic-ratelimit-requests-remaining", "49"},
			{"anthropic-ratelimit-requests-reset", "2025-08-21T12:40:59Z"},
			{"anthropic-ratelimit-tokens-limit", "80000"}, {"anthropic-ratelimit-tokens-remaining", "80000"},
			{"anthropic-ratelimit-tokens-reset", "2025-08-21T12:40:01Z"},
			{"anthropic-ratelimit-input-tokens-limit", "40000"}, {"anthropic-ratelimit-input-tokens-remaining", "1000"},
			{"anthropic-ratelimit-input-tokens-reset", "2025-08-21T12:41:30Z"},
			{"anthropic-ratelimit-output-tokens-limit", "8000"}, {"anthropic-ratelimit-output-tokens-remaining", "8000"},
			{"anthropic-ratelimit-output-tokens-reset", "2025-08-21T14:40:00+02:00"},
		}, pick: 2, want: []Quota{
			{Dialect: anthropic, Policy: "requests", Unit: "requests", Limit: 50, Remaining: 49, Reset: t0.Add(59 * time.Second), Window: time.Minute},
			{Dialect: anthropic, Policy: "tokens", Unit: "tokens", Limit: 80000, Remaining: 80000, Reset: t0.Add(time.Second), Window: time.Minute},
			{Dialect: anthropic, Policy: "input-tokens", Unit: "tokens", Limit: 40000, Remaining: 1000, Reset: t0.Add(90 * time.Second), Window: time.Minute},
			{Dialect: anthropic, Policy: "output-tokens", Unit: "tokens", Limit: 8000, Remaining: 8000, Reset: t0, Window: time.Minute},
		}},
	})
}

func TestParseShopify(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "32/40", h: hdr{{"X-Shopify-Shop-Api-Call-Limit", "32/40"}},
			want: []Quota{{Dialect: shopify, Unit: "requests", Limit: 40, Remaining: 8, Window: 20 * time.Second}}},
		{name: "40/40", h: hdr{{"X-Shopify-Shop-Api-Call-Limit", "40/40"}, {"Retry-After", "2.0"}},
			want: []Quota{{Dialect: shopify, Unit: "requests", Limit: 40, Remaining: 0, Window: 20 * time.Second}}},
		{name: "malformed", h: hdr{{"X-Shopify-Shop-Api-Call-Limit", "40"}}},
	})
}

func TestParseIETF(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "cloudflare -08 list", h: hdr{
			{"Ratelimit", `"default";r=50;t=30`}, {"Ratelimit-Policy", `"burst";q=100;w=60`},
		}, want: []Quota{{Dialect: ietf, Policy: "default", Unit: "requests", Remaining: 50, Reset: t0.Add(30 * time.Second), Window: time.Minute}}},
		{name: "draft example, named policies", h: hdr{
			{"RateLimit-Policy", `"burst";q=100;w=60,"daily";q=1000;w=86400`},
			{"RateLimit", `"burst";r=50;t=30, "daily";r=5;t=80000`},
		}, pick: 1, want: []Quota{
			{Dialect: ietf, Policy: "burst", Unit: "requests", Limit: 100, Remaining: 50, Reset: t0.Add(30 * time.Second), Window: time.Minute},
			{Dialect: ietf, Policy: "daily", Unit: "requests", Limit: 1000, Remaining: 5, Reset: t0.Add(80000 * time.Second), Window: 24 * time.Hour},
		}},
		{name: "split over lines, exhausted binds", h: hdr{
			{"RateLimit-Policy", `"burst";q=100;w=60`}, {"RateLimit-Policy", `"daily";q=1000;w=86400`},
			{"RateLimit", `"burst";r=0;t=30`}, {"RateLimit", `"daily";r=5;t=80000`},
		}, pick: 0, want: []Quota{
			{Dialect: ietf, Policy: "burst", Unit: "requests", Limit: 100, Remaining: 0, Reset: t0.Add(30 * time.Second), Window: time.Minute},
			{Dialect: ietf, Policy: "daily", Unit: "requests", Limit: 1000, Remaining: 5, Reset: t0.Add(80000 * time.Second), Window: 24 * time.Hour},
		}},
		{name: "appendix q on the limit item", h: hdr{{"RateLimit", `"sliding";q=12;r=6;t=1`}},
			want: []Quota{{Dialect: ietf, Policy: "sliding", Unit: "requests", Limit: 12, Remaining: 6, Reset: t0.Add(time.Second), Window: time.Minute}}},
		{name: "express-rate-limit draft-8, pk and qu", h: hdr{
			{"RateLimit-Policy", `"100-in-1min"; q=100; w=60; qu="content-bytes"; pk=:MmUzZWMxN2E=:`},
			{"RateLimit", `"100-in-1min"; r=99; t=60; pk=:MmUzZWMxN2E=:`},
		}, want: []Quota{{Dialect: ietf, Policy: "100-in-1min", Unit: "content-bytes", Limit: 100, Remaining: 99, Reset: t0.Add(time.Minute), Window: time.Minute, Key: "MmUzZWMxN2E="}}},
		{name: "malformed: trailing comma", h: hdr{{"RateLimit", `"default";r=50;t=30,`}}},
		{name: "malformed: unterminated string", h: hdr{{"RateLimit", `"default;r=50`}}},
		{name: "negative r skips the member", h: hdr{{"RateLimit", `"a";r=-1;t=3, "b";r=4`}},
			want: []Quota{{Dialect: ietf, Policy: "b", Unit: "requests", Remaining: 4, Window: time.Minute}}},
		{name: "-07 dictionary", h: hdr{{"RateLimit", "limit=100, remaining=50, reset=5"}, {"RateLimit-Policy", "100;w=10"}},
			want: []Quota{{Dialect: ietf07, Unit: "requests", Limit: 100, Remaining: 50, Reset: t0.Add(5 * time.Second), Window: 10 * time.Second}}},
		{name: "-06 three headers", h: hdr{
			{"RateLimit-Limit", "10"}, {"RateLimit-Remaining", "5"}, {"RateLimit-Reset", "7"}, {"RateLimit-Policy", "10;w=1, 50;w=60"},
		}, want: []Quota{{Dialect: ietf06, Unit: "requests", Limit: 10, Remaining: 5, Reset: t0.Add(7 * time.Second), Window: time.Second}}},
		{name: "-03 policies inside RateLimit-Limit", h: hdr{
			{"RateLimit-Limit", "50, 10;w=1, 50;w=60, 1000;w=3600"}, {"RateLimit-Remaining", "49"}, {"RateLimit-Reset", "58"},
		}, want: []Quota{{Dialect: ietf06, Unit: "requests", Limit: 50, Remaining: 49, Reset: t0.Add(58 * time.Second), Window: time.Minute}}},
		{name: "sharepoint draft-03 at 80 %", h: hdr{
			{"RateLimit-Limit", "1200"}, {"RateLimit-Remaining", "120"}, {"RateLimit-Reset", "5"},
		}, want: []Quota{{Dialect: ietf06, Unit: "requests", Limit: 1200, Remaining: 120, Reset: t0.Add(5 * time.Second), Window: time.Minute}}},
		{name: "tollbooth: the window in X-Rate-Limit-Duration", h: hdr{
			{"RateLimit-Limit", "5"}, {"RateLimit-Remaining", "3"}, {"RateLimit-Reset", "1"},
			{"X-Rate-Limit-Limit", "5.00"}, {"X-Rate-Limit-Duration", "1"},
		}, want: []Quota{{Dialect: ietf06, Unit: "requests", Limit: 5, Remaining: 3, Reset: t0.Add(time.Second), Window: time.Second}}},
	})
}

func TestParseSeveralDialects(t *testing.T) {
	// express-rate-limit with legacy and standard headers at once.
	runParseCases(t, []parseCase{
		{name: "legacy and -06", h: hdr{
			{"X-RateLimit-Limit", "100"}, {"X-RateLimit-Remaining", "3"}, {"X-RateLimit-Reset", epoch(40 * time.Second)},
			{"RateLimit-Limit", "100"}, {"RateLimit-Remaining", "3"}, {"RateLimit-Reset", "40"},
		}, pick: 0, want: []Quota{
			{Dialect: ietf06, Unit: "requests", Limit: 100, Remaining: 3, Reset: t0.Add(40 * time.Second), Window: time.Minute},
			{Dialect: xRateLimit, Unit: "requests", Limit: 100, Remaining: 3, Reset: t0.Add(40 * time.Second)},
		}},
	})
}

func TestParseNothing(t *testing.T) {
	if _, ok := Parse(nil, t0); ok {
		t.Error("nil header parsed")
	}
	if _, ok := Parse(http.Header{"Content-Type": {"text/plain"}}, t0); ok {
		t.Error("no quota headers parsed")
	}
}

// TestParseDateCorrection: an absolute reset on a server whose clock is ten
// seconds ahead is read against its Date, not our clock.
func TestParseDateCorrection(t *testing.T) {
	h := http.Header{}
	h.Set("Date", t0.Add(10*time.Second).Format(http.TimeFormat))
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", epoch(70*time.Second)) // 60 s after the server's now
	q, ok := Parse(h, t0)
	if !ok || !q.Reset.Equal(t0.Add(60*time.Second)) {
		t.Fatalf("reset = %v, want %v", q.Reset, t0.Add(60*time.Second))
	}
	// Relative values are not corrected.
	h.Set("X-RateLimit-Reset", "60")
	if q, _ := Parse(h, t0); !q.Reset.Equal(t0.Add(60 * time.Second)) {
		t.Fatalf("delta reset = %v", q.Reset)
	}
}

func TestParseReset(t *testing.T) {
	now := t0
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"0", now, true},
		{"30", now.Add(30 * time.Second), true},
		{"2.5", now.Add(2500 * time.Millisecond), true},
		{"86400", now.Add(24 * time.Hour), true},
		{strconv.FormatInt(now.Unix()+90, 10), now.Add(90 * time.Second), true},
		{strconv.FormatInt(now.Unix()-90, 10), now, true},
		{strconv.FormatInt(now.Unix()+1, 10) + ".250", now.Add(1250 * time.Millisecond), true},
		{strconv.FormatInt(now.UnixMilli()+1500, 10), now.Add(1500 * time.Millisecond), true},
		{"99999999999999999999999", now.Add(horizon), true},
		{" 12 ", now.Add(12 * time.Second), true},
		{"-5", time.Time{}, false},
		{"1e3", time.Time{}, false},
		{"", time.Time{}, false},
		{"NaN", time.Time{}, false},
		{"1.2.3", time.Time{}, false},
	}
	for _, tc := range tests {
		got, ok := ParseReset(tc.in, now)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("ParseReset(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	type rc struct {
		name string
		h    hdr
		want time.Duration
		ok   bool
	}
	cases := []rc{
		{"seconds", hdr{{"Retry-After", "120"}}, 120 * time.Second, true},
		{"discord header", hdr{{"Retry-After", "65"}}, 65 * time.Second, true},
		{"shopify float", hdr{{"Retry-After", "2.0"}}, 2 * time.Second, true},
		{"fraction", hdr{{"Retry-After", "0.25"}}, 250 * time.Millisecond, true},
		{"zero", hdr{{"Retry-After", "0"}}, 0, true},
		{"imf-fixdate", hdr{{"Retry-After", t0.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{"rfc 850", hdr{{"Retry-After", t0.Add(45 * time.Second).Format(time.RFC850)}}, 45 * time.Second, true},
		{"asctime", hdr{{"Retry-After", t0.Add(30 * time.Second).Format(time.ANSIC)}}, 30 * time.Second, true},
		{"date in the past", hdr{{"Retry-After", t0.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"capped (#247: 484289h)", hdr{{"Retry-After", "1743441608"}}, defaultMaxRetryAfter, true},
		{"retry-after-ms wins", hdr{{"Retry-After", "2"}, {"retry-after-ms", "1500"}}, 1500 * time.Millisecond, true},
		{"x-ms-retry-after-ms", hdr{{"x-ms-retry-after-ms", "250.5"}}, 250*time.Millisecond + 500*time.Microsecond, true},
		{"negative", hdr{{"Retry-After", "-1"}}, 0, false},
		{"garbage", hdr{{"Retry-After", "soon"}}, 0, false},
		{"exponent", hdr{{"Retry-After", "1e3"}}, 0, false},
		{"absent", hdr{{"X-Other", "1"}}, 0, false},
	}
	hs := make([]hdr, len(cases))
	for i, c := range cases {
		hs[i] = c.h
	}
	got := serve(t, hs, http.StatusTooManyRequests)
	for i, c := range cases {
		d, ok := ParseRetryAfter(got[i], t0)
		if d != c.want || ok != c.ok {
			t.Errorf("%s: ParseRetryAfter = %v, %v; want %v, %v", c.name, d, ok, c.want, c.ok)
		}
	}
}

func TestRetryAfterDateSkew(t *testing.T) {
	h := http.Header{}
	h.Set("Date", t0.Add(-20*time.Second).Format(http.TimeFormat)) // server clock 20 s behind
	h.Set("Retry-After", t0.Add(10*time.Second).Format(http.TimeFormat))
	if d, ok := ParseRetryAfter(h, t0); !ok || d != 30*time.Second {
		t.Fatalf("got %v, %v; want 30s", d, ok)
	}
}

func TestParseIMFFixdate(t *testing.T) {
	for _, s := range []string{"Sun, 06 Nov 1994 08:49:37 GMT", "Thu, 21 Aug 2025 12:40:00 GMT"} {
		a, ok := parseIMFFixdate(s)
		b, err := http.ParseTime(s)
		if !ok || err != nil || !a.Equal(b) {
			t.Errorf("%s: %v %v, http.ParseTime %v %v", s, a, ok, b, err)
		}
	}
	for _, s := range []string{"Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Xyz 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC"} {
		if _, ok := parseIMFFixdate(s); ok {
			t.Errorf("%s parsed", s)
		}
	}
}
