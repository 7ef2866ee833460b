-- wrk script: each request redeems the next unused authorization code `hoc_bench_<n>`. Threads take
-- interleaved numbers so no code is presented twice. VERIFIER comes from the environment (run.sh sets it).
local verifier = os.getenv("VERIFIER")
local threads = {}
local counter = 0
local step = 1

function setup(thread)
  thread:set("offset", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  counter = offset
  step = tonumber(os.getenv("WRK_THREADS") or "2")
end

function request()
  local code = "hoc_bench_" .. counter
  counter = counter + step
  local body = '{"code":"' .. code .. '","codeVerifier":"' .. verifier .. '","redirectUri":"http://127.0.0.1:5000/cb"}'
  return wrk.format("POST", "/v1/auth/handoff/exchange",
    { ["Authorization"] = "Bearer pk_test_bench", ["Content-Type"] = "application/json" }, body)
end

function done(summary, latency, requests)
  io.write(string.format("non-2xx or errors: %d\n", summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
