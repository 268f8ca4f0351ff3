package fleet

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
)

// Rates whose bucket the scripts cannot count — a full bucket that takes
// more than 2^60 ns (about 36 years) to refill, as limit.PerSecond refuses,
// or a rate above a million a second — are refused at construction, each
// with a headroom.ConfigError; and so are windows longer than 2^60 ns.
func TestRefusesRatesItCannotHold(t *testing.T) {
	c, prefix := testRedis(t)
	o := Options{Name: "slow", Prefix: prefix}
	for _, tc := range []struct {
		rate  float64
		burst int
	}{
		{1e-13, 1}, {1e-17, 1}, {1e-9, 2}, {3e-8, 40}, {math.NaN(), 1}, {math.Inf(1), 1}, {-1, 1}, {0, 1}, {2e6, 1},
		{1, 2e9},
	} {
		if _, err := PerSecond(c, tc.rate, tc.burst, o); !errors.Is(err, headroom.ErrConfig) {
			t.Errorf("PerSecond(%v, %d): err = %v, want a ConfigError", tc.rate, tc.burst, err)
		}
	}
	if _, err := PerWindow(c, 1, 37*365*24*time.Hour, o); !errors.Is(err, headroom.ErrConfig) {
		t.Errorf("PerWindow over 37 years: err = %v, want a ConfigError", err)
	}
}

// The slowest bucket it accepts — one permit refilled in about 36 years —
// works: its first permit is granted and the second refused with the whole
// interval as RetryAfter, neither overflowing nor negative.
func TestSlowestRateRefusesWithItsInterval(t *testing.T) {
	c, prefix := testRedis(t)
	const span = time.Duration(1 << 60)
	rate := float64(time.Second) / float64(span-time.Second)
	lim, err := PerSecond(c, rate, 1, Options{Name: "slowest", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := lim.Acquire(ctx); err != nil {
		t.Fatalf("first permit of a full bucket: %v", err)
	}
	_, err = lim.Acquire(ctx)
	var rl *limit.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter < span-2*time.Second || rl.RetryAfter > span {
		t.Errorf("second permit: %v, want a refusal with a RetryAfter of about %v", err, span)
	}
}

// foreignValues are what another program, a bug or a hand at redis-cli may
// leave at a limiter's key: numbers no script of ours writes, and no number.
var foreignValues = []string{"inf", "-inf", "nan", "-nan", "1e300", "-1e300", "9e18", "-9e18", "-5", "0x10", "abc", ""}

// A bucket holding a foreign value is repaired, never trusted: the
// limiter grants at most its burst over a short span, every refusal's
// RetryAfter lies within one refill of the bucket, and a caller that waits
// asks Redis a handful of times, not thousands.
func TestForeignBucketStateIsRepaired(t *testing.T) {
	c, prefix := testRedis(t)
	hook := &countingHook{}
	c.AddHook(hook)
	ctx := context.Background()
	const rate, burst = 10, 5
	for i, v := range append(foreignValues, "hash") {
		o := Options{Name: "foreign" + strconv.Itoa(i), Prefix: prefix}
		key := o.key("bucket")
		if v == "hash" {
			c.HSet(ctx, key, "x", 1)
		} else {
			c.Set(ctx, key, v, time.Minute)
		}
		lim, err := PerSecond(c, rate, burst, o)
		if err != nil {
			t.Fatal(err)
		}
		granted := countGrants(t, lim, 3*burst, time.Second*burst/rate, v)
		if granted > burst+1 {
			t.Errorf("%q: %d granted at once, want at most the burst of %d (and one refilled)", v, granted, burst)
		}
		// A waiter asks again when its RetryAfter has passed, not in a loop.
		c.Set(ctx, key, v, time.Minute)
		q, _ := PerSecond(c, rate, burst, Options{Name: o.Name, Prefix: prefix, QueueLimit: new(10)})
		before := hook.n.Load()
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		for range burst + 2 {
			q.Acquire(wctx)
		}
		cancel()
		if n := hook.n.Load() - before; n > 20 {
			t.Errorf("%q: %d calls to Redis in 300ms of waiting, want a handful", v, n)
		}
	}
}

// A window whose segments hold foreign counts or times — negative, NaN,
// infinite, no number, times in the future — is repaired, never trusted:
// 30 acquires against a limit of 10 admit at most 10.
func TestForeignWindowStateIsRepaired(t *testing.T) {
	c, prefix := testRedis(t)
	ctx := context.Background()
	counts := append(foreignValues, "3.5", "1e9")
	for i, v := range counts {
		for _, field := range []string{"c", "l"} {
			o := Options{Name: "window" + field + strconv.Itoa(i), Prefix: prefix}
			key := o.key("window")
			now := serverNowUS(t, c)
			const windowUS, segments = 1_000_000, 8
			seg := strconv.FormatInt(now/(windowUS/segments), 10)
			if field == "c" {
				c.HSet(ctx, key, "c"+seg, v, "l"+seg, now)
			} else {
				c.HSet(ctx, key, "c"+seg, 1, "l"+seg, v)
			}
			c.HSet(ctx, key, "junk", "x", "c", "y")
			lim, err := PerWindow(c, 10, time.Second, o)
			if err != nil {
				t.Fatal(err)
			}
			granted := countGrants(t, lim, 30, time.Second, field+"="+v)
			if granted > 10 {
				t.Errorf("%s=%q: %d of 30 admitted, want at most the limit of 10", field, v, granted)
			}
		}
	}
	// A key of another type is replaced.
	o := Options{Name: "windowtype", Prefix: prefix}
	c.Set(ctx, o.key("window"), "x", time.Minute)
	lim, _ := PerWindow(c, 10, time.Second, o)
	if _, err := lim.Acquire(ctx); err != nil {
		t.Errorf("a window key holding a string: %v, want it replaced and a lease", err)
	}
}

// countGrants makes n acquires of lim and counts the leases; every other
// answer must be a refusal whose RetryAfter lies within (0, maxWait].
func countGrants(t *testing.T, lim limit.Limiter, n int, maxWait time.Duration, what string) int {
	t.Helper()
	granted := 0
	for range n {
		_, err := lim.Acquire(context.Background())
		var rl *limit.RateLimitedError
		switch {
		case err == nil:
			granted++
		case errors.As(err, &rl):
			if rl.RetryAfter <= 0 || rl.RetryAfter > maxWait {
				t.Errorf("%q: RetryAfter %v, want within (0, %v]", what, rl.RetryAfter, maxWait)
			}
		default:
			t.Errorf("%q: %v, want a lease or a refusal", what, err)
		}
	}
	return granted
}

// serverNowUS is the Redis server's time in the scripts' microseconds.
func serverNowUS(t *testing.T, c redis.UniversalClient) int64 {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMicro() - clockBase*1_000_000
}
