"""The Lua scripts of the Redis store, one per operation, so that each runs atomically on the server.

Redis (and Valkey) run a script to its end before any other command. So a write is applied whole or
not at all, and two replicas writing at once are serialised. A script only checks and moves the
bytes it is given: tokens, rows and index members (state/redis/layout.py). It never decodes a record.

An update or a delete is a compare-and-set. The replica reads the record, and computes the new row
and the index members to move. The script applies them only if the record is still the one read.
Otherwise it answers `changed` and the replica reads again, so no update is ever lost.

Every script names every key it touches in KEYS. Answers are arrays whose first element says what
happened. It is one of these:

- `ok`: the script did what it was asked.
- `missing`: there is no such record.
- `changed`: the record is no longer the one read.
- `invalid` i: the i-th reference names no record.
- `dependants` j: the j-th child relation still names the record.
- `duplicate`: a record with that identifier exists.
"""

from __future__ import annotations

# The keys are the rows and the order, then for each reference the parent's rows and the index.
# The arguments are the token and the row, then for each reference the parent's token and the index member.
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

# The keys are the rows, then for each reference the parent's rows and the index. The arguments are
# the token, the row read and the new row. Then for each reference come the parent's token, the old
# index member and the new one.
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

# The keys are the rows, the order, the m indexes the record is in, and the d indexes of the relations
# it is the parent of. The arguments are the token, the row read, m, the m members and the record's
# owner prefix.
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

# The keys are the order and the rows, and the arguments the first and the last rank. The answer is
# {count, the rows in order}.
PAGE = """
local count = redis.call('ZCARD', KEYS[1])
local tokens = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2])
if #tokens == 0 then return {count, {}} end
return {count, redis.call('HMGET', KEYS[2], unpack(tokens))}
"""

# The keys are the parent's rows, the index and the child's rows. The arguments are the owner's token,
# the owner's prefix, the offset and the limit. The answer is {} when the owner does not exist, and
# {count, rows} otherwise.
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

# Moves or copies the keys of one state to those of another, paired by position. KEYS holds the n
# sources, then the n destinations.
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

# The keys are the marker, then n staging keys, n seed keys and n live keys. The argument is the
# record layout. The answer is 1 when seeded now. It is 0 when another replica had seeded already,
# and then the staging keys are dropped.
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

# The keys are n source keys, then n destination keys. The arguments are 'move' or 'copy', and the
# copies' time to live in ms (0 for none).
REPLACE = (
    TRANSFER
    + """
local n = #KEYS / 2
transfer(0, n, n, ARGV[1], tonumber(ARGV[2]))
return 1
"""
)

# Sessions have a registry and their metadata. The registry is a ZSET from a name to its deadline, in
# ms of Redis's clock. The metadata is a HASH from a name to "created:last_used", in ms. Every session
# script first forgets the sessions past their deadline and answers their names. The replica then
# drops their keys with SESSION_DROP.
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

# The keys are the registry, the metadata, n seed keys and n session keys. The arguments are the name,
# the time to live (ms) and the limit. The answer is {'used' or 'created', expired names}, or
# {'full', expired names, live sessions} when no session may be added.
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

# The keys are the registry and the session's keys, and the argument is the name. The answer is 1 when
# the keys were dropped, and 0 when the session is live again.
SESSION_DROP = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
"""

# The keys are the registry, the metadata and the session's keys, and the argument is the name. The
# answer is 1 when the session was live and 0 otherwise. Its keys go either way.
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

# The keys are the registry and the metadata. The answer is {expired names, {name, meta, ...}}, with
# the live sessions sorted by name.
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
