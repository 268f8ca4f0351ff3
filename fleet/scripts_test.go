package fleet

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/redis/go-redis/v9"
)

// scriptOn returns a bucket running script on key with the shape's args.
func scriptOn(c redis.UniversalClient, script *redis.Script, key string, args ...any) *scriptBucket {
	return newScriptBucket(&caller{client: c, timeout: time.Second}, script, key, metrics.OpTokenBucket, time.Hour, args...)
}

// clockBase is 2023-11-14 22:13:20 UTC in seconds, the zero of the scripts'
// microsecond clock.
const clockBase = 1700000000

// The scripts count time from clockBase.
func TestScriptClockBase(t *testing.T) {
	if !strings.Contains(scriptClock, "(tonumber(t[1]) - "+strconv.Itoa(clockBase)+") * 1000000") {
		t.Errorf("scriptClock does not count from %d:\n%s", clockBase, scriptClock)
	}
}

// storedTime reads a time the scripts keep, in µs since clockBase: the
// bucket's TAT, or a window's one last grant.
func storedTime(t *testing.T, c redis.UniversalClient, key string) time.Duration {
	t.Helper()
	ctx := context.Background()
	v, err := c.Get(ctx, key).Float64()
	if err != nil {
		h, herr := c.HGetAll(ctx, key).Result()
		if herr != nil {
			t.Fatal(err, herr)
		}
		for f, x := range h {
			if strings.HasPrefix(f, "l") {
				v, err = strconv.ParseFloat(x, 64)
			}
		}
		if err != nil || len(h) != 2 {
			t.Fatalf("%s holds %v, want one segment", key, h)
		}
	}
	return time.Duration(math.Round(v)) * time.Microsecond
}

func mustTake(t *testing.T, b bucket, need, want int) grant {
	t.Helper()
	g, err := b.take(context.Background(), need, want)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The token bucket grants its burst, then refuses with the exact time until
// the next permit on the server's clock: the first grant at t1 set the
// theoretical arrival time to t1 + burst intervals, so a refusal at t2 must
// say t1 + interval − t2, to the microsecond.
func TestGCRARefusesWithExactRetryAfter(t *testing.T) {
	c, prefix := testRedis(t)
	key := "{" + prefix + ":gcra}:bucket"
	const interval = 100_000 // µs: 10 a second
	b := scriptOn(c, gcraScript, key, float64(interval), 5)
	first := mustTake(t, b, 5, 5)
	if first.n != 5 {
		t.Fatalf("a full bucket of 5 granted %d", first.n)
	}
	first.at = storedTime(t, c, key) - 5*interval*time.Microsecond // the TAT is 5 intervals on
	refused := mustTake(t, b, 1, 1)
	if refused.n != 0 {
		t.Fatalf("an empty bucket granted %d", refused.n)
	}
	want := time.Duration(interval)*time.Microsecond - (refused.at - first.at)
	if d := refused.retryAfter - want; d < 0 || d > time.Microsecond {
		t.Errorf("RetryAfter = %v, want %v (exact, rounded up to the µs)", refused.retryAfter, want)
	}
	// A cost of 3 needs three intervals more.
	big := mustTake(t, b, 3, 3)
	want = 3*time.Duration(interval)*time.Microsecond - (big.at - first.at)
	if d := big.retryAfter - want; big.n != 0 || d < 0 || d > time.Microsecond {
		t.Errorf("cost 3: granted %d, RetryAfter %v, want 0 and %v", big.n, big.retryAfter, want)
	}
}

// Asked for between need and want, the bucket grants as many as are free.
func TestGCRAGrantsUpToWant(t *testing.T) {
	c, prefix := testRedis(t)
	b := scriptOn(c, gcraScript, "{"+prefix+":gcra}:bucket", 1e6, 5) // 1 a second
	if g := mustTake(t, b, 1, 3); g.n != 3 {
		t.Errorf("want 3 of 5: granted %d", g.n)
	}
	if g := mustTake(t, b, 1, 10); g.n != 2 {
		t.Errorf("want 10 of the 2 left: granted %d", g.n)
	}
	if g := mustTake(t, b, 1, 10); g.n != 0 || g.retryAfter <= 0 {
		t.Errorf("empty: granted %d, RetryAfter %v", g.n, g.retryAfter)
	}
}

// The bucket's key expires when the bucket would be full again, so an idle
// limit leaves nothing behind.
func TestGCRAKeyExpires(t *testing.T) {
	c, prefix := testRedis(t)
	key := "{" + prefix + ":gcra}:bucket"
	b := scriptOn(c, gcraScript, key, 1e5, 50) // 10 a second, 5 s to refill 50
	mustTake(t, b, 20, 20)
	ttl, err := c.PTTL(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	// 20 permits take 2 s to come back; the key lives that long, plus 1 ms.
	if ttl <= 1900*time.Millisecond || ttl > 2002*time.Millisecond {
		t.Errorf("PTTL = %v, want about 2s", ttl)
	}
}

// The sliding window grants its limit, then refuses until the segment of
// the first grant is a window old: exactly, on the server's clock.
func TestWindowRefusesWithExactRetryAfter(t *testing.T) {
	c, prefix := testRedis(t)
	key := "{" + prefix + ":win}:window"
	const windowUS, segmentUS = 10_000_000, 1_250_000 // 10 s in 8 segments
	b := scriptOn(c, windowScript, key, windowUS, segmentUS, 3)
	first := mustTake(t, b, 2, 2)
	if first.n != 2 {
		t.Fatalf("granted %d of 3", first.n)
	}
	if g := mustTake(t, b, 1, 5); g.n != 1 {
		t.Fatalf("the last permit: granted %d", g.n)
	}
	refused := mustTake(t, b, 1, 1)
	// The first two permits free at first.at + window, unless the third
	// landed in the same segment: then all three free at its grant + window.
	if refused.n != 0 {
		t.Fatalf("a full window granted %d", refused.n)
	}
	if refused.retryAfter <= 9*time.Second || refused.retryAfter > 10*time.Second {
		t.Errorf("RetryAfter = %v, want just under 10s", refused.retryAfter)
	}
	ttl, _ := c.PTTL(context.Background(), key).Result()
	if ttl <= 9*time.Second || ttl > 10*time.Second+time.Millisecond {
		t.Errorf("PTTL = %v, want one window", ttl)
	}
}

// A window's retry after counts the cost: two permits need both segments
// that hold them to expire, and the answer is exact.
func TestWindowRetryAfterCountsCost(t *testing.T) {
	c, prefix := testRedis(t)
	key := "{" + prefix + ":win}:window"
	const windowUS = 10_000_000
	b := scriptOn(c, windowScript, key, windowUS, windowUS/8, 2)
	first := mustTake(t, b, 1, 1)
	first.at = storedTime(t, c, key)
	// Put another permit in an earlier segment by hand: the script keeps
	// one count and last-grant time per segment.
	earlierUS := first.at.Microseconds() - 2_000_000
	seg := earlierUS / (windowUS / 8)
	c.HSet(context.Background(), key, "c"+itoa(seg), 1, "l"+itoa(seg), earlierUS)
	g := mustTake(t, b, 2, 2)
	want := first.at + windowUS*time.Microsecond - g.at
	if g.n != 0 || g.retryAfter != want {
		t.Errorf("cost 2: granted %d, RetryAfter %v, want 0 and %v (the later segment's expiry)", g.n, g.retryAfter, want)
	}
	one := mustTake(t, b, 1, 1)
	want = time.Duration(earlierUS+windowUS)*time.Microsecond - one.at
	if one.n != 0 || one.retryAfter != want {
		t.Errorf("cost 1: granted %d, RetryAfter %v, want 0 and %v (the earlier segment's expiry)", one.n, one.retryAfter, want)
	}
}

// Every key of a limit carries its hash tag, so in Redis Cluster a limit's
// keys share a slot and its scripts may touch them.
func TestKeysCarryTheHashTag(t *testing.T) {
	o := (&Options{Name: "api"}).withDefaults()
	for _, kind := range []string{"bucket", "window", "instances"} {
		if k := o.key(kind); !strings.HasPrefix(k, "{headroom:api}:") {
			t.Errorf("key(%q) = %q, want the tag {headroom:api}", kind, k)
		}
	}
}

// A server that has never seen the script answers EVALSHA with NOSCRIPT;
// the bucket then sends the script itself, once, and every later acquire is
// one EVALSHA: one round trip.
func TestScriptFallsBackOnNoScript(t *testing.T) {
	p := startPrivateRedis(t)
	c := p.client(t)
	hook := &countingHook{}
	c.AddHook(hook)
	b := scriptOn(c, gcraScript, "{t:noscript}:bucket", 1.0, 1_000_000)
	mustTake(t, b, 1, 1)
	if n := hook.n.Load(); n != 2 {
		t.Errorf("first acquire on a fresh server: %d commands, want 2 (EVALSHA, then EVAL on NOSCRIPT)", n)
	}
	for range 10 {
		mustTake(t, b, 1, 1)
	}
	if n := hook.n.Load() - 2; n != 10 {
		t.Errorf("10 acquires after: %d commands, want 10", n)
	}
}
