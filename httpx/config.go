package httpx

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/headroom-go/headroom/internal/jsonconfig"
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/resilience"
)

// Config is a client as read from JSON: resilience settings, named limiters,
// the limiter every host uses, per-host overrides, and the quota guard.
//
//	{
//	  "resilience": {"retries": 3, "timeout": "30s", "attemptTimeout": "10s"},
//	  "limiters": {
//	    "default": {"permitsPerSecond": 50},
//	    "github":  {"perWindow": {"permits": 5000, "window": "1h"}},
//	    "bulk":    {"adaptiveRate": {"maxUnitsPerMinute": 1800}, "shared": true}
//	  },
//	  "rateLimit": "default",
//	  "hosts": {
//	    "api.github.com": {"rateLimit": "github"},
//	    "localhost":      {"rateLimit": "none"}
//	  },
//	  "quotaGuard": {"reserveFraction": 0.05}
//	}
//
// Durations are strings ("1m", "250ms"); a bare number is an error. Unknown
// fields are errors, and ParseConfig lists every problem at once.
type Config struct {
	// Resilience, when present, adds the resilience layer:
	// resilience.HTTP(*Resilience), the preset with
	// the settings given here replaced (a zero one keeps the preset's value;
	// see resilience.Options). "resilience": {} is resilience.HTTP(resilience.Options{}) itself.
	Resilience *resilience.Options `json:"resilience,omitempty"`
	// Limiters are named limiter shapes (limit.Options, one shape each).
	Limiters map[string]LimiterConfig `json:"limiters,omitempty"`
	// RateLimit names the limiter of every host without an override; ""
	// means none.
	RateLimit string `json:"rateLimit,omitempty"`
	// Hosts overrides the limiter per host, keyed by host name, with the
	// port when it is not the scheme's default ("localhost:8080"); a name
	// without a port also covers the host's other ports. Names match
	// without regard to case, and ":80" and ":443" are the default ports.
	// An IPv6 address is written in brackets, as in a URL ("[::1]",
	// "[::1]:8080"). A key is a host, never a URL and without userinfo:
	// "api.github.com", not "https://api.github.com/" or
	// "user@api.github.com".
	Hosts map[string]HostConfig `json:"hosts,omitempty"`
	// QuotaGuard configures the quota guard, on by default.
	QuotaGuard *GuardConfig `json:"quotaGuard,omitempty"`
}

// LimiterConfig is one named limiter: a limit.Options, whose fields sit at
// the same level ({"permitsPerSecond": 100}), and where it lives.
type LimiterConfig struct {
	limit.Options
	// Shared makes every host that names the limiter use one instance of
	// it; otherwise each host gets its own.
	Shared bool `json:"shared,omitempty"`
}

// noLimiter is the limiter name that means none, for a host override.
const noLimiter = "none"

// HostConfig is a host's override.
type HostConfig struct {
	// RateLimit names the host's limiter in Limiters, or noLimiter.
	RateLimit string `json:"rateLimit,omitempty"`
}

// GuardConfig configures the quota guard: quota.Options, whose fields sit at
// the same level, or "disabled": true.
type GuardConfig struct {
	quota.Options
	Disabled bool `json:"disabled,omitempty"`
}

// ParseConfig reads a Config from JSON and validates it. Every problem is
// listed at once (errors.Join), each naming its place by the JSON path
// (`resilience.timeout`, `limiters["github"].perWindow.window`): a value of
// the wrong type and an unknown field are a *headroom.ConfigError each, and the
// parts that did decode are checked by Validate, whose problems name their
// fields the same way. Only JSON that is not well formed, or data after the
// configuration, is reported alone, with its line and column.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	undecoded, read := jsonconfig.Decode(data, &c)
	l := problems.JSON("httpx", reflect.TypeFor[Config](), undecoded)
	if read {
		c.check(l)
	}
	if err := l.Err(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate returns every problem with c at once, joined with errors.Join,
// each a *headroom.ConfigError of package "httpx" whose Field (and the names
// in its Want) is spelled as the JSON does, at the place the setting sits
// (`limiters["github"].perWindow.window`, `resilience.timeout`,
// `quotaGuard.reserveFraction`): the problems resilience.Options.Validate,
// limit.Options.Validate and quota.Options.Validate find in their sections,
// a name that names no limiter, a Hosts key that is not a host, two Hosts
// keys for one host, and a setting beside a disabled quota guard.
func (c *Config) Validate() error {
	l := problems.JSON("httpx", reflect.TypeFor[Config](), nil)
	c.check(l)
	return l.Err()
}

// check records c's problems on l.
func (c *Config) check(l *problems.List) {
	if c.Resilience != nil {
		problems.Check(l.At("Resilience"), c.Resilience)
	}
	limiters := l.At("Limiters")
	for _, name := range sortedKeys(c.Limiters) {
		if name == noLimiter || name == "" {
			l.Add("Limiters", strconv.Quote(name), `a name other than "" and "none"`)
			continue
		}
		lc := c.Limiters[name]
		problems.Check(limiters.Entry(name), &lc.Options)
	}
	if c.RateLimit != "" && c.RateLimit != noLimiter {
		if _, ok := c.Limiters[c.RateLimit]; !ok {
			l.Add("RateLimit", strconv.Quote(c.RateLimit), "the name of a limiter in limiters")
		}
	}
	c.checkHosts(l.At("Hosts"))
	if g := c.QuotaGuard; g != nil {
		if g.Disabled {
			besideDisabled(g, l.At("QuotaGuard"))
		} else {
			problems.Check(l.At("QuotaGuard"), &g.Options)
		}
	}
}

// checkHosts records on l, the List of Hosts, the keys that are not hosts,
// two keys for one host, and the names that name no limiter.
func (c *Config) checkHosts(l *problems.List) {
	seen := map[string]string{}
	for _, h := range sortedKeys(c.Hosts) {
		hl := l.Entry(h)
		if !checkHost(hl, h) {
		} else if k := normalHost(h, ""); seen[k] != "" {
			hl.Add("", fmt.Sprintf("the same host as %q", seen[k]), "one entry per host")
		} else {
			seen[k] = h
		}
		n := c.Hosts[h].RateLimit
		if n == "" || n == noLimiter {
			continue
		}
		if _, ok := c.Limiters[n]; !ok {
			hl.Add("RateLimit", strconv.Quote(n), `the name of a limiter in limiters, or "none"`)
		}
	}
}

// checkHost records on l, and reports false, a Hosts key that no
// request's host key (hostKey) can equal, saying which key to write
// instead: a URL, a key with a path or with userinfo ("user@"; the
// suggestion leaves it out, password and all), an IPv6 address without the
// brackets a URL puts around it ("::1", which could not be told from a
// port, for "[::1]"), and a key that is no host at all ("[::1", "a b").
func checkHost(l *problems.List, h string) bool {
	what, want := "", "the host alone, as in %q"
	host, scheme := h, ""
	if i := strings.Index(host, "://"); i >= 0 {
		what, scheme, host = "a URL", host[:i], host[i+3:]
	}
	if i := strings.IndexByte(host, '/'); i >= 0 {
		if what == "" {
			what = "a path"
		}
		host = host[:i]
	}
	// The last "@": a password may hold one, a host never does.
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		if what == "" {
			what = "userinfo"
		}
		host = host[i+1:]
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		if what == "" {
			what, want = "an IPv6 address without brackets", "the address in brackets, as in %q"
		}
		host = "[" + host + "]"
	}
	if what == "" {
		if u, err := url.Parse("http://" + h); err == nil && u.Host == h && h != "" {
			return true
		}
		l.Add("", "not a host", `a host name or address, with its port when it is not the scheme's default, as in "api.example.com", "localhost:8080" or "[::1]:8080"`)
		return false
	}
	l.Add("", what, fmt.Sprintf(want, normalHost(host, scheme)))
	return false
}

// besideDisabled records on l, the List of the quota guard, the settings
// given beside "disabled": true, which would otherwise be silently ignored.
func besideDisabled(g *GuardConfig, l *problems.List) {
	v := reflect.ValueOf(&g.Options).Elem()
	for _, f := range jsonconfig.Fields(v.Type()) {
		fv := v.FieldByIndex(f.Index)
		if fv.IsZero() {
			continue
		}
		if fv.Kind() == reflect.Pointer {
			fv = fv.Elem()
		}
		l.Add(v.Type().FieldByIndex(f.Index).Name, fv.Interface(), `nothing beside "disabled": true; remove one or the other`)
	}
}

// Options returns the options that build the client c describes, in order:
// the resilience layer, the rate-limit layer (one limiter per host, or the
// shared instance of a limiter marked shared), the quota guard. Each call
// makes a new policy, with its own breaker and budget.
func (c *Config) Options() ([]Option, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var opts []Option
	if c.Resilience != nil {
		p, err := resilience.HTTP(*c.Resilience)
		if err != nil {
			return nil, err
		}
		opts = append(opts, WithResilience(p))
	}
	if c.usesLimiters() {
		opts = append(opts, c.rateLimitOption())
	}
	switch g := c.QuotaGuard; {
	case g == nil:
	case g.Disabled:
		opts = append(opts, WithoutQuotaGuard())
	default:
		opts = append(opts, WithQuotaGuard(g.Options))
	}
	return opts, nil
}

func (c *Config) usesLimiters() bool {
	if c.RateLimit != "" && c.RateLimit != noLimiter {
		return true
	}
	for _, h := range c.Hosts {
		if h.RateLimit != "" && h.RateLimit != noLimiter {
			return true
		}
	}
	return false
}

// rateLimitOption is the rate-limit layer of a config: for each host, the
// limiter its override names, else RateLimit.
func (c *Config) rateLimitOption() Option {
	// A snapshot, taken when Options has just validated c: the limiters are
	// made per host later, on first use, and must not see what the caller
	// does to c after building the client.
	hosts := make(map[string]HostConfig, len(c.Hosts))
	for h, hc := range c.Hosts {
		hosts[normalHost(h, "")] = hc // keyed as requests are (hostKey)
	}
	c = &Config{Limiters: maps.Clone(c.Limiters), RateLimit: c.RateLimit, Hosts: hosts}
	return limiterOption("rateLimit", nil, func(lc *limiterConfig, b *builder) (*hostSet, error) {
		var mu sync.Mutex
		shared := map[string]*hostEntry{}
		var keep time.Duration
		for _, l := range c.Limiters {
			keep = max(keep, minIdle(l.Options))
		}
		b.t.closers = append(b.t.closers, func() {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range shared {
				closeLimiter(e.lim)
			}
			clear(shared)
		})
		return newHostSet(lc, keep, func(host string) *hostEntry {
			name := c.limiterOf(host)
			if name == "" || name == noLimiter {
				return &hostEntry{}
			}
			l := c.Limiters[name]
			o := l.Options
			o.Name = cmp.Or(o.Name, name)
			if !l.Shared {
				return b.hostLimiter(o, host)
			}
			mu.Lock()
			defer mu.Unlock()
			e := shared[name]
			if e == nil {
				e = b.hostLimiter(o, "")
				if _, broken := e.lim.(brokenLimiter); broken {
					return e
				}
				shared[name] = e
			}
			return &hostEntry{lim: e.lim, hold: e.hold, shared: true}
		}), nil
	})
}

// limiterOf is the name of host's limiter: its override's, else RateLimit.
// A host key with a port falls back to the override of the host alone.
func (c *Config) limiterOf(host string) string {
	if h, ok := c.Hosts[host]; ok && h.RateLimit != "" {
		return h.RateLimit
	}
	if hn, ok := cutPort(host); ok {
		if h, ok := c.Hosts[hn]; ok && h.RateLimit != "" {
			return h.RateLimit
		}
	}
	return c.RateLimit
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
