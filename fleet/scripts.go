package fleet

import "github.com/redis/go-redis/v9"

// The scripts read the time with TIME, so every process is judged by the
// Redis server's clock and the clients' clocks do not matter. Times inside
// them are microseconds since the scripts' zero, 2023-11-14 22:13:20 UTC
// (1700000000 s after the Unix epoch), which keeps them near 10^14, where
// a double still resolves a sixteenth of a microsecond. Numbers written back
// to Redis go through string.format, because Lua's own number-to-string
// conversion prints 14 significant digits and would round them.
//
// Every script starts by asking for effects replication: a script that reads
// TIME and then writes must be replicated by its effects, which Redis 5 and
// later do by default and Redis 3.2 and 4 do on request.
//
// Each script touches only the keys passed in KEYS, as Redis Cluster
// requires, and every key it writes gets an expiry.

const scriptClock = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = (tonumber(t[1]) - 1700000000) * 1000000 + tonumber(t[2])
`

// gcraScript is the generic cell rate algorithm (ITU-T I.371) over one key
// holding the theoretical arrival time (TAT). ARGV: the emission interval in
// µs, the burst in permits, need, want. It grants between need and want
// permits, as many as are free, or none. Granted, it answers the number
// granted, a bare integer; refused, {0, retry after in µs, the server's now
// in µs}. A permit is free when granting it keeps the TAT within burst
// intervals of now, so over any span of d µs it grants at most burst +
// d/interval permits. A refusal writes nothing; its retry after is exact:
// the instant need permits are free.
//
// The key is repaired, never trusted: a TAT that is no number, NaN, or
// further ahead than a full bucket's span (which no grant of this bucket
// leaves) is set to now + that span — an empty bucket, so that foreign
// state can delay grants by one refill but never add any — and a key of
// another type is replaced.
var gcraScript = redis.NewScript(gcraSource)

const gcraSource = scriptClock + `
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local span = burst * interval
local v = redis.pcall('GET', KEYS[1])
if type(v) == 'table' then
  redis.call('DEL', KEYS[1])
  v = false
end
local tat = tonumber(v or '0')
if tat == nil or tat ~= tat or tat > now + span + 1 then
  tat = now + span
  redis.call('SET', KEYS[1], string.format('%.17g', tat), 'PX', math.ceil(span / 1000) + 1)
end
if tat < now then tat = now end
local free = math.floor((now - tat) / interval + burst + 1e-9)
if free < need then
  return {0, math.max(math.ceil(tat + (need - burst) * interval - now), 1), now}
end
local granted = math.min(want, free)
tat = tat + granted * interval
redis.call('SET', KEYS[1], string.format('%.17g', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
return granted
`

// windowScript is a sliding window over one hash. The time is cut into
// segments of ARGV[2] µs; for each segment with grants the hash holds the
// permits granted in it (field c<segment>) and when the last of them was
// granted (field l<segment>). A segment's permits are free again, all
// together, one window after its last grant, so every span of one window
// holds at most the limit, at any alignment. ARGV: the window in µs, the
// segment in µs, the limit, need, want. It answers as gcraScript does; the
// retry after of a refusal is exact: when enough segments will have expired
// for need permits to fit.
//
// The hash is repaired, never trusted: a count that is not a whole number
// from 1 to the limit counts as the limit, a last grant that is no number or
// later than now counts as now (both written back, so that a segment of
// foreign state fills the window for one window, and never frees a permit),
// a count without its time dates from now, fields of no segment are
// deleted, and a key of another type is replaced.
var windowScript = redis.NewScript(windowSource)

const windowSource = scriptClock + `
local window = tonumber(ARGV[1])
local segment = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local need = tonumber(ARGV[4])
local want = tonumber(ARGV[5])
local h = redis.pcall('HGETALL', KEYS[1])
if h.err then
  redis.call('DEL', KEYS[1])
  h = {}
end
local count, last = {}, {}
for i = 1, #h, 2 do
  local kind, seg = string.sub(h[i], 1, 1), string.sub(h[i], 2)
  if (kind ~= 'c' and kind ~= 'l') or not string.match(seg, '^%d+$') then
    redis.call('HDEL', KEYS[1], h[i])
  elseif kind == 'c' then
    count[seg] = h[i + 1]
  else
    last[seg] = h[i + 1]
  end
end
local live, total = {}, 0
for seg, v in pairs(count) do
  local c, l = tonumber(v), tonumber(last[seg] or 'x')
  if c == nil or c ~= c or c < 1 or c > limit or c ~= math.floor(c) then
    c = limit
    redis.call('HSET', KEYS[1], 'c' .. seg, limit)
  end
  if l == nil or l ~= l or l > now then
    l = now
    redis.call('HSET', KEYS[1], 'l' .. seg, string.format('%.0f', now))
  end
  if l + window <= now then
    redis.call('HDEL', KEYS[1], 'c' .. seg, 'l' .. seg)
  else
    total = total + c
    live[#live + 1] = {l, c}
  end
end
for seg in pairs(last) do
  if not count[seg] then redis.call('HDEL', KEYS[1], 'l' .. seg) end
end
if limit - total < need then
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1)
  table.sort(live, function(a, b) return a[1] < b[1] end)
  local left = total
  for _, s in ipairs(live) do
    left = left - s[2]
    if limit - left >= need then return {0, math.max(math.ceil(s[1] + window - now), 1), now} end
  end
  return {0, window, now}
end
local granted = math.min(want, limit - total)
local seg = string.format('%.0f', math.floor(now / segment))
redis.call('HINCRBY', KEYS[1], 'c' .. seg, granted)
redis.call('HSET', KEYS[1], 'l' .. seg, string.format('%.0f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1)
return granted
`

// heartbeatScript records one process's heartbeat in a sorted set scored by
// the server's time, drops the members whose last heartbeat is ARGV[2] µs
// old or older, keeps the set for ARGV[3] ms, and returns {how many members
// are left, how many of them have an id that sorts before this one's}: the
// process's rank, by which sharded limits spread the processes over their
// shards. ARGV[1] is the process's id. A key of another type is replaced.
var heartbeatScript = redis.NewScript(scriptClock + `
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then redis.call('DEL', KEYS[1]) end
redis.call('ZADD', KEYS[1], string.format('%.0f', now), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now - tonumber(ARGV[2])))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local rank = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if id < ARGV[1] then rank = rank + 1 end
end
return {redis.call('ZCARD', KEYS[1]), rank}
`)
