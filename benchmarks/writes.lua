-- wrk script for the writes that do not grow the store (wrk args: tag, kind):
--   put     PUT the whole of the product in the URL (its own code, the same values every time);
--   patch   PATCH one field of the product in the URL;
--   delete  on the collection's URL, a POST of a new product and a DELETE alternately: each DELETE
--           removes the product POSTed LAG pairs earlier on the same thread, so none answers 404
--           (a lag of 100 pairs was not enough: now and then a connection's request waits while
--           the others get 200 answers); the first LAG pairs POST twice instead. Codes are unique
--           per run tag, thread and pair, at most 15 characters with a tag of two.
-- A thread's first request is a POST that nothing deletes: wrk builds thread 0's first request to
-- check the script and never sends it.
local threads = 0
local counter = 0
local tag, kind = "X", "put"
local LAG = 500
local json = { ["Content-Type"] = "application/json", ["X-API-Key"] = "dev-api-key" }
local plain = { ["X-API-Key"] = "dev-api-key" }

-- `tid` is a global that setup() sets in each thread's own Lua state (a local here would shadow it).
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

function init(args)
  tag = args[1] or "X"
  kind = args[2] or "put"
end

local function product(code)
  return '{"productcode":"' .. code .. '","productname":"Bench model ' .. code .. '",'
    .. '"productscale":"1:10","productvendor":"Bench Vendor","productdescription":"Load test.",'
    .. '"quantityinstock":10,"buyprice":"10.00","msrp":"20.00","productline":"Motorcycles"}'
end

local function code(series, pair)
  return string.format("B%s%s%d_%07d", series, tag, tid or 0, pair)
end

request = function()
  counter = counter + 1
  if kind == "put" then
    return wrk.format("PUT", nil, json, product(string.match(wrk.path, "([^/]+)/$")))
  elseif kind == "patch" then
    return wrk.format("PATCH", nil, json, '{"quantityinstock":11}')
  end
  if counter == 1 then
    return wrk.format("POST", nil, json, product(code("F", 0)))
  end
  local pair = math.floor(counter / 2)
  if counter % 2 == 0 then
    return wrk.format("POST", nil, json, product(code("D", pair)))
  elseif pair <= LAG then
    return wrk.format("POST", nil, json, product(code("F", pair)))
  end
  return wrk.format("DELETE", wrk.path .. code("D", pair - LAG) .. "/", plain, nil)
end
