"""The Lua scripts of the Redis store: one per operation, so that each runs atomically on the server.

Redis (and Valkey) run a script to its end before any other command: a write is applied whole or
not at all, and two replicas writing at once are serialised. A script only checks and moves the
bytes it is given (tokens, rows, index members: see `redis_layout`); it never decodes a record.

An update or a delete is a compare-and-set: the replica reads the record, computes the new row and
the index members to move, and the script applies them only if the record is still the one read
(else it answers `changed` and the replica reads again), so no update is ever lost.

Every script names every key it touches in KEYS. Answers are arrays whose first element says what
happened: `ok`, `missing` (no such record), `changed`, `invalid` i (the i-th reference names no
record), `dependants` j (the j-th child relation still names the record), `duplicate`.
"""

from __future__ import annotations

# KEYS: rows, order, then per reference: parent rows, index
# ARGV: token, row, then per reference: parent token, index member
CREATE = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'duplicate'} end
local n = (#KEYS - 2) / 2
for i = 1, n do
  if redis.call('HEXISTS', KEYS[1 + 2 * i], ARGV[1 + 2 * i]) == 0 then return {'invalid', i} end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
for i = 1, n do redis.call('ZADD', KEYS[2 + 2 * i], 0, ARGV[2 + 2 * i]) end
return {'ok'}
"""

# KEYS: rows, then per reference: parent rows, index
# ARGV: token, the row read, the new row, then per reference: parent token, old member, new member
UPDATE = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return {'missing'} end
if current ~= ARGV[2] then return {'changed'} end
local n = (#KEYS - 1) / 2
for i = 1, n do
  if redis.call('HEXISTS', KEYS[2 * i], ARGV[1 + 3 * i]) == 0 then return {'invalid', i} end
end
for i = 1, n do
  local old, new = ARGV[2 + 3 * i], ARGV[3 + 3 * i]
  if old ~= new then
    redis.call('ZREM', KEYS[1 + 2 * i], old)
    redis.call('ZADD', KEYS[1 + 2 * i], 0, new)
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return {'ok'}
"""

# KEYS: rows, order, the m indexes the record is in, the d indexes of the relations it is parent of
# ARGV: token, the row read, m, the m members, the record's owner prefix
DELETE = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return {'missing'} end
if current ~= ARGV[2] then return {'changed'} end
local m = tonumber(ARGV[3])
local prefix = ARGV[4 + m]
for j = 1, #KEYS - 2 - m do
  if redis.call('ZLEXCOUNT', KEYS[2 + m + j], '[' .. prefix, '(' .. prefix .. '\\255') > 0 then
    return {'dependants', j}
  end
end
for i = 1, m do redis.call('ZREM', KEYS[2 + i], ARGV[3 + i]) end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
return {'ok'}
"""

# KEYS: order, rows; ARGV: first rank, last rank -> {count, the rows in order}
PAGE = """
local count = redis.call('ZCARD', KEYS[1])
local tokens = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2])
if #tokens == 0 then return {count, {}} end
return {count, redis.call('HMGET', KEYS[2], unpack(tokens))}
"""

# KEYS: parent rows, index, child rows; ARGV: owner token, owner prefix, offset, limit
# -> {} when the owner does not exist, else {count, rows}
OWNED = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {} end
local low, high = '[' .. ARGV[2], '(' .. ARGV[2] .. '\\255'
local count = redis.call('ZLEXCOUNT', KEYS[2], low, high)
local members = redis.call('ZRANGEBYLEX', KEYS[2], low, high, 'LIMIT', ARGV[3], ARGV[4])
if #members == 0 then return {count, {}} end
local tokens = {}
for i, member in ipairs(members) do tokens[i] = string.sub(member, #ARGV[2] + 1) end
return {count, redis.call('HMGET', KEYS[3], unpack(tokens))}
"""

# the keys of one state to those of another, paired by position: KEYS = n sources, then n destinations
TRANSFER = """
local function transfer(from, to, n, how, ttl)
  for i = 1, n do
    local source, destination = KEYS[from + i], KEYS[to + i]
    redis.call('DEL', destination)
    if redis.call('EXISTS', source) == 1 then
      if how == 'move' then
        redis.call('RENAME', source, destination)
        redis.call('PERSIST', destination)
      else
        redis.call('COPY', source, destination)
        if ttl > 0 then redis.call('PEXPIRE', destination, ttl) end
      end
    end
  end
end
"""

# KEYS: the marker, n staging keys, n seed keys, n live keys; ARGV: the record layout
# -> 1 when seeded now, 0 when another replica had seeded already (the staging keys are dropped)
SEED = (
    TRANSFER
    + """
local n = (#KEYS - 1) / 3
if redis.call('EXISTS', KEYS[1]) == 1 then
  for i = 2, n + 1 do redis.call('DEL', KEYS[i]) end
  return 0
end
transfer(1, 1 + n, n, 'move', 0)
transfer(1 + n, 1 + 2 * n, n, 'copy', 0)
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""
)

# KEYS: n source keys, n destination keys; ARGV: 'move' or 'copy', the copies' time to live (ms, 0: none)
REPLACE = (
    TRANSFER
    + """
local n = #KEYS / 2
transfer(0, n, n, ARGV[1], tonumber(ARGV[2]))
return 1
"""
)

# Sessions: a registry (ZSET: name -> deadline in ms of Redis's clock) and their metadata (HASH:
# name -> "created:last_used", ms). Every script first forgets the sessions past their deadline and
# answers their names, whose keys the replica then drops with SESSION_DROP.
EXPIRE = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function expire(registry, meta, now)
  local gone = redis.call('ZRANGEBYSCORE', registry, '-inf', now)
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', registry, '-inf', now)
    redis.call('HDEL', meta, unpack(gone))
  end
  return gone
end
"""

# KEYS: registry, meta, n seed keys, n session keys; ARGV: name, time to live (ms), limit
# -> {'used' | 'created', expired names} or {'full', expired names, live sessions}
SESSION_OPEN = (
    TRANSFER
    + EXPIRE
    + """
local now = now_ms()
local gone = expire(KEYS[1], KEYS[2], now)
local name, ttl, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], 'XX', now + ttl, name)
local meta = redis.call('HGET', KEYS[2], name)
if meta then
  redis.call('HSET', KEYS[2], name, string.match(meta, '^[^:]*') .. ':' .. now)
  return {'used', gone}
end
local live = redis.call('ZCARD', KEYS[1])
if live >= limit then return {'full', gone, live} end
local n = (#KEYS - 2) / 2
transfer(2, 2 + n, n, 'copy', 0)
redis.call('ZADD', KEYS[1], now + ttl, name)
redis.call('HSET', KEYS[2], name, now .. ':' .. now)
return {'created', gone}
"""
)

# KEYS: registry, the session's keys; ARGV: name -> 1 when dropped, 0 when the session is live again
SESSION_DROP = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
"""

# KEYS: registry, meta, the session's keys; ARGV: name -> 1 when it was live, else 0 (its keys go anyway)
SESSION_REMOVE = (
    EXPIRE
    + """
expire(KEYS[1], KEYS[2], now_ms())
local live = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
for i = 3, #KEYS do redis.call('DEL', KEYS[i]) end
return live
"""
)

# KEYS: registry, meta -> {expired names, {name, meta, ...} of the live sessions, by name}
SESSION_LIST = (
    EXPIRE
    + """
local gone = expire(KEYS[1], KEYS[2], now_ms())
local names = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(names)
local live = {}
for _, name in ipairs(names) do
  table.insert(live, name)
  table.insert(live, redis.call('HGET', KEYS[2], name))
end
return {gone, live}
"""
)
