package fleet

import "github.com/redis/go-redis/v9"

// The shared view of one published quota is a hash: r, the remaining
// allowance, less what the fleet's processes have reserved since; l, the
// published limit; t, when the window resets (0: no reset published); b,
// when a Retry-After ends. Times are the server's microseconds on the
// scripts' clock (see scriptClock); the clients send durations from their own now, which the
// scripts add to the server's, so that no client's clock is compared with
// another's.

// quotaPublishScript takes one response's figures. ARGV: 1 if it published
// a quota, its remaining, limit and reset in µs from now (0: none), a
// Retry-After in µs (0: none), and how long to keep the hash, ms. Its rules
// are the quota guard's: a reset more than a second after the held one (or
// a held one that has passed, or none) starts a new window, whose figures
// are taken; one within a second of the held reset is the same window,
// whose remaining only lowers the view (the view already counts the
// reservations the server's figure may not); an earlier one describes a
// window that is over and is ignored. A Retry-After blocks the key until
// its end, and only a later end moves it.
var quotaPublishScript = redis.NewScript(scriptClock + `
local k = KEYS[1]
if ARGV[1] == '1' then
  local remaining, lim, resetIn = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  local reset = 0
  if resetIn > 0 then reset = now + resetIn end
  local held = tonumber(redis.call('HGET', k, 't') or '-1')
  if held <= 0 or held <= now or reset == 0 or reset > held + 1000000 then
    redis.call('HSET', k, 'r', remaining, 'l', lim, 't', string.format('%.0f', reset))
  elseif reset >= held - 1000000 then
    local r = tonumber(redis.call('HGET', k, 'r') or ARGV[2])
    if remaining < r then redis.call('HSET', k, 'r', remaining) end
  end
end
local ra = tonumber(ARGV[5])
if ra > 0 then
  local b = tonumber(redis.call('HGET', k, 'b') or '0')
  if now + ra > b then redis.call('HSET', k, 'b', string.format('%.0f', now + ra)) end
end
redis.call('PEXPIRE', k, ARGV[6])
return 1
`)

// quotaReserveScript reserves ARGV[1] units for an attempt. It returns
// {1, 0} when the attempt may go — the units are taken off the view, or
// the view knows nothing fresh (no figures, or the window is over: the
// local guard decides) — and {0, wait in µs} when it must wait: until the
// Retry-After ends, or the reset; ARGV[3] µs when no reset is published.
// The reserve is ARGV[2] of the limit, rounded down; an attempt goes while
// the remaining less its cost stays at or above it, and one that could
// never fit goes once the remaining is above it at all, as in the guard.
var quotaReserveScript = redis.NewScript(scriptClock + `
local h = redis.call('HMGET', KEYS[1], 'r', 'l', 't', 'b')
local b = tonumber(h[4] or '0')
if b > now then return {0, math.ceil(b - now)} end
if not h[1] then return {1, 0} end
local r, l, t = tonumber(h[1]), tonumber(h[2] or '0'), tonumber(h[3] or '0')
if t ~= 0 and t <= now then return {1, 0} end
local cost = tonumber(ARGV[1])
local reserve = math.floor(l * tonumber(ARGV[2]))
if r - cost >= reserve or (r > reserve and l > 0 and cost > l - reserve) then
  redis.call('HINCRBY', KEYS[1], 'r', -cost)
  return {1, 0}
end
if t == 0 then return {0, tonumber(ARGV[3])} end
return {0, math.ceil(t - now)}
`)

// quotaReadScript returns the view: {1 if figures are held, remaining,
// limit, µs to the reset (0: none or passed), µs to the end of a
// Retry-After (0: none)}.
var quotaReadScript = redis.NewScript(scriptClock + `
local h = redis.call('HMGET', KEYS[1], 'r', 'l', 't', 'b')
local t, b = tonumber(h[3] or '0'), tonumber(h[4] or '0')
local known, resetIn, blockedIn = 0, 0, 0
if h[1] and (t == 0 or t > now) then known = 1 end
if t > now then resetIn = t - now end
if b > now then blockedIn = b - now end
return {known, tonumber(h[1] or '0'), tonumber(h[2] or '0'), math.ceil(resetIn), math.ceil(blockedIn)}
`)
