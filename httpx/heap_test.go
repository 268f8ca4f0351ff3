package httpx

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/resilience"
)

// heapBound is what the README's client may keep on the heap however many
// hosts it has called: at most 1,024 hosts' limiters (WithMaxHosts) and
// 1,024 keys of the quota guard (quota.Options.MaxKeys), each a few
// kilobytes. docs/benchmarks.md has the figures for 100,000 hosts.
const heapBound = 16 << 20

// The README's client, sent one request to each of many distinct hosts,
// holds the heap within heapBound: the limiters' host map and the quota
// guard's keys drop the least recently used. HEADROOM_HOSTS sets how many
// hosts (3,000 by default; docs/benchmarks.md runs 100,000).
func TestManyHostsHoldTheHeapBounded(t *testing.T) {
	hosts := 3000
	if s := os.Getenv("HEADROOM_HOSTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		hosts = n
	}
	policy, err := resilience.HTTP(resilience.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := ok200(r)
		resp.Header.Set("X-RateLimit-Limit", "100")
		resp.Header.Set("X-RateLimit-Remaining", "99")
		resp.Header.Set("X-RateLimit-Reset", "60")
		return resp, err
	})
	client, err := NewClient(WithTransport(base), WithResilience(policy),
		WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{Controller: "cubic"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Transport.(*Transport).Close()
	before := heapInUse()
	for i := range hosts {
		resp, err := client.Get(fmt.Sprintf("http://h%d.test/", i))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	grown := int64(heapInUse()) - int64(before)
	tr := client.Transport.(*Transport)
	t.Logf("%d hosts: heap grew by %.1f MB; %d hosts' limiters kept", hosts, float64(grown)/(1<<20), tr.hosts[0].len())
	if grown > heapBound {
		t.Errorf("%d hosts grew the heap by %d bytes; want at most %d", hosts, grown, heapBound)
	}
	runtime.KeepAlive(client)
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
