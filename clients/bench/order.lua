-- wrk script for POST /order (clients/bench/throughput.py): a valid order body of
-- clients/README.md, alternating buy and sell at the mid so the orders cross and fill and
-- the book stays bounded, like the clients' order stream. Requests are formatted once.
local bodies = {
  '{"buy_sell":"buy","symbol":2330,"price":100.00,"quantity":100,"market_type":"common",' ..
  '"price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench",' ..
  '"client_timestamp":"2026-11-22T10:00:00.000000Z"}',
  '{"buy_sell":"sell","symbol":2330,"price":100.00,"quantity":100,"market_type":"common",' ..
  '"price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench",' ..
  '"client_timestamp":"2026-11-22T10:00:00.000000Z"}',
}
local requests = {}
local n = 0

init = function(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  for i, body in ipairs(bodies) do
    requests[i] = wrk.format(nil, nil, nil, body)
  end
end

request = function()
  n = n + 1
  return requests[n % 2 + 1]
end
