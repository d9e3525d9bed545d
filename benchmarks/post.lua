-- wrk script: POST a new product per request. Codes are unique per run tag (wrk arg 1), thread and
-- request, so every POST creates (201) rather than conflicts (409); the store grows as it runs.
local threads = 0
local counter = 0
local tag = "X"
local headers = { ["Content-Type"] = "application/json", ["X-API-Key"] = "dev-api-key" }

-- `tid` is a global that setup() sets in each thread's own Lua state (a local here would shadow it).
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

function init(args)
  tag = args[1] or "X"
end

request = function()
  counter = counter + 1
  local code = string.format("B%s%d_%07d", tag, tid or 0, counter)
  local body = '{"productcode":"' .. code .. '","productname":"Bench model ' .. code .. '",'
    .. '"productscale":"1:10","productvendor":"Bench Vendor","productdescription":"Load test.",'
    .. '"quantityinstock":10,"buyprice":"10.00","msrp":"20.00","productline":"Motorcycles"}'
  return wrk.format("POST", nil, headers, body)
end
