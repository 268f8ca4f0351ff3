package quota

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/headroom-go/headroom"
)

// The fuzz targets check, for any input: no panic; every Quota with
// non-negative counts and window, a reset that is zero or within
// [now, now + horizon]; every wait within [0, the cap]. Seed corpora are in
// testdata/fuzz/<FuzzName>/.

// fuzzKeys are the header keys FuzzParse and FuzzObserve may set.
var fuzzKeys = []string{
	"Ratelimit", "Ratelimit-Policy", "Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset",
	"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Reset-After",
	"X-Ratelimit-Bucket", "X-Ratelimit-Resource", "X-Ratelimit-Used",
	"X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset",
	"X-App-Limit-24hour-Remaining", "X-App-Limit-24hour-Reset",
	"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests",
	"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens",
	"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset",
	"Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset",
	"X-Shopify-Shop-Api-Call-Limit", "Retry-After", "Retry-After-Ms", "X-Ms-Retry-After-Ms", "Date", "Age",
}

func fuzzHeader(k1 uint8, v1 string, k2 uint8, v2 string, k3 uint8, v3 string) http.Header {
	h := http.Header{}
	h[fuzzKeys[int(k1)%len(fuzzKeys)]] = append(h[fuzzKeys[int(k1)%len(fuzzKeys)]], v1)
	h[fuzzKeys[int(k2)%len(fuzzKeys)]] = append(h[fuzzKeys[int(k2)%len(fuzzKeys)]], v2)
	h[fuzzKeys[int(k3)%len(fuzzKeys)]] = append(h[fuzzKeys[int(k3)%len(fuzzKeys)]], v3)
	return h
}

func checkQuotas(t *testing.T, qs []Quota, now time.Time) {
	t.Helper()
	for _, q := range qs {
		if q.Remaining < 0 || q.Limit < 0 || q.Window < 0 {
			t.Fatalf("negative figure: %+v", q)
		}
		checkInstant(t, q.Reset, now)
	}
}

func checkInstant(t *testing.T, r, now time.Time) {
	t.Helper()
	if r.IsZero() {
		return
	}
	if r.Before(now) || r.After(now.Add(horizon)) {
		t.Fatalf("instant %v outside [now, now+horizon] (now %v)", r, now)
	}
}

func checkWait(t *testing.T, d, maxWait time.Duration) {
	t.Helper()
	if d < 0 || d > maxWait {
		t.Fatalf("wait %v outside [0, %v]", d, maxWait)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(uint8(6), "4999", uint8(5), "5000", uint8(7), "1756212000")
	f.Fuzz(func(t *testing.T, k1 uint8, v1 string, k2 uint8, v2 string, k3 uint8, v3 string) {
		h := fuzzHeader(k1, v1, k2, v2, k3, v3)
		checkQuotas(t, parseAll(h, t0, nil), t0)
		if q, ok := Parse(h, t0); ok {
			checkQuotas(t, []Quota{q}, t0)
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	f.Add("120", "", "")
	f.Fuzz(func(t *testing.T, ra, ms, date string) {
		h := http.Header{"Retry-After": {ra}}
		if ms != "" {
			h["Retry-After-Ms"] = []string{ms}
		}
		if date != "" {
			h["Date"] = []string{date}
		}
		d, ok := ParseRetryAfter(h, t0)
		if !ok && d != 0 {
			t.Fatalf("not ok but %v", d)
		}
		checkWait(t, d, defaultMaxRetryAfter)
		// The millisecond header, when it reads, wins over Retry-After.
		if v, valid := parseDecimal(ms); ms != "" && valid {
			if want := clampWait(v.millis(), defaultMaxRetryAfter); !ok || d != want {
				t.Fatalf("Retry-After-Ms %q beside Retry-After %q: %v %v, want %v", ms, ra, d, ok, want)
			}
		}
	})
}

func FuzzIETF(f *testing.F) {
	f.Add(`"burst";r=50;t=30`, `"burst";q=100;w=60`)
	f.Fuzz(func(t *testing.T, rl, policy string) {
		h := http.Header{"Ratelimit": {rl}, "Ratelimit-Policy": {policy}}
		checkQuotas(t, parseAll(h, t0, nil), t0)
	})
}

func FuzzIETF06(f *testing.F) {
	f.Add("10, 10;w=1, 50;w=60", "5", "7", "10;w=1")
	f.Fuzz(func(t *testing.T, lim, rem, reset, policy string) {
		h := http.Header{"Ratelimit-Limit": {lim}, "Ratelimit-Remaining": {rem}, "Ratelimit-Reset": {reset}, "Ratelimit-Policy": {policy}}
		checkQuotas(t, parseAll(h, t0, nil), t0)
	})
}

func FuzzSF(f *testing.F) {
	f.Add(`"a";r=1, b;q=2;pk=:AAE=:, (1 2);x`, false)
	f.Fuzz(func(t *testing.T, v string, dict bool) {
		var buf [maxPolicies]sfMember
		ms, _ := sfParse([]string{v}, dict, buf[:0])
		if len(ms) > maxPolicies {
			t.Fatal("overflow")
		}
		sfItem(v)
		sfLooksLikeDict(v)
	})
}

// Field lines are read as if joined with commas (RFC 9651 §4.2): two lines
// that parse give the members of their join. Only one way: two malformed
// halves can join into a valid line.
func FuzzSFLines(f *testing.F) {
	f.Add(`"burst";q=100;w=60`, `"daily";q=1000;w=86400`, false)
	f.Add(`a=1`, `b=?0;x`, true)
	f.Fuzz(func(t *testing.T, a, b string, dict bool) {
		a, b = strings.Trim(a, " \t"), strings.Trim(b, " \t")
		if a == "" || b == "" {
			return
		}
		var buf1, buf2 [maxPolicies]sfMember
		two, ok := sfParse([]string{a, b}, dict, buf1[:0])
		if !ok {
			return
		}
		one, ok := sfParse([]string{a + ", " + b}, dict, buf2[:0])
		if !ok {
			t.Fatalf("lines %q and %q parse apart, not joined", a, b)
		}
		if !reflect.DeepEqual(two, one) {
			t.Fatalf("lines %q and %q: apart %+v, joined %+v", a, b, two, one)
		}
	})
}

func FuzzReset(f *testing.F) {
	f.Add("1470173023.123", int64(1470173000))
	f.Fuzz(func(t *testing.T, v string, nowSec int64) {
		now := time.Unix(nowSec%(1<<40), 0)
		r, ok := ParseReset(v, now)
		if !ok && !r.IsZero() {
			t.Fatal("not ok but an instant")
		}
		checkInstant(t, r, now)
		p := parser{h: http.Header{}, now: now}
		if r, ok := p.goDuration(v); ok {
			checkInstant(t, r, now)
		}
		if r, ok := p.rfc3339(v); ok {
			checkInstant(t, r, now)
		}
		parseHTTPDate(v)
	})
}

// FuzzObserve drives the guard with arbitrary responses and costs: every
// wait it asks for stays within [0, MaxRetryAfter].
func FuzzObserve(f *testing.F) {
	f.Add(uint16(429), uint8(6), "0", uint8(7), "30", uint8(29), "86400", int64(5))
	f.Fuzz(func(t *testing.T, status uint16, k1 uint8, v1 string, k2 uint8, v2 string, k3 uint8, v3 string, step int64) {
		g, err := New(Options{MaxRetryAfter: headroom.Duration(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		now := t0
		for i := range 3 {
			g.Observe("k", Response{Status: int(status), Header: fuzzHeader(k1, v1, k2, v2, k3, v3)}, now)
			checkWait(t, admit(g, "k", now), 30*time.Second)
			checkWait(t, admitN(g, "k", now, int(step%11)), 30*time.Second) // units, any cost
			now = now.Add(time.Duration(step%int64(time.Hour)) * time.Duration(i+1))
			checkWait(t, admit(g, "k", now), 30*time.Second)
		}
	})
}
