-- wrk script: POST /order with the clients' order mix (clients/README.md, "The order
-- stream"): 8 symbols, both sides, prices 99.50 .. 100.50 in 0.05 steps, quantities
-- 100 .. 1000, market/ioc 5 %, limit/rod 70 %, limit/ioc 20 %, limit/fok 5 %.
-- Both sides around one mid make orders cross, so the matching engine does real work
-- and the books stay bounded.
--
-- The whole requests are built once per thread in init() and cycled, so request() is a
-- table lookup and wrk spends its CPU on HTTP, not on Lua. No response() hook: it would make wrk parse every answer (and slow
-- it down next to the /health run); wrk already counts non-2xx answers.
-- wrk embeds LuaJIT, i.e. Lua 5.1: no integer division operator.

local symbols = { 2330, 2317, 2454, 2308, 2412, 2881, 2882, 1301 }
local headers = { ["Content-Type"] = "application/json" }
local requests = {}
local count = 1024
local next_request = 0
local thread_id = 0

function setup(thread)
  thread_id = thread_id + 1
  thread:set("seed", 1000 + thread_id)
end

function init(args)
  math.randomseed(seed or 1000)
  local stamp = os.date("!%Y-%m-%dT%H:%M:%S") .. ".000000Z"
  for k = 1, count do
    local r = math.random(0, 99)
    local price_type, tif = "limit", "rod"
    if r < 5 then
      price_type, tif = "market", "ioc"
    elseif r >= 95 then
      tif = "fok"
    elseif r >= 75 then
      tif = "ioc"
    end
    local side = (math.random(0, 1) == 0) and "buy" or "sell"
    local cents = 10000 + 5 * (math.random(0, 20) - 10)
    local body = string.format(
      '{"buy_sell":"%s","symbol":%d,"price":%d.%02d,"quantity":%d,"market_type":"common",'
        .. '"price_type":"%s","time_in_force":"%s","order_type":"stock","user_def":"hftbench",'
        .. '"client_timestamp":"%s"}',
      side, symbols[math.random(1, #symbols)], math.floor(cents / 100), cents % 100,
      math.random(1, 10) * 100, price_type, tif, stamp)
    requests[k] = wrk.format("POST", "/order", headers, body)
  end
end

function request()
  next_request = next_request % count + 1
  return requests[next_request]
end
