-- wrk: each request rotates the next seeded refresh token `zrt_bench_<n>` of this measurement's range
-- (BASE + 1 …), each a different session's current token; threads take interleaved numbers.
local base = tonumber(os.getenv("BASE") or "0")
local threads = {}

function setup(thread)
  thread:set("offset", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  counter = base + offset
  step = tonumber(os.getenv("WRK_THREADS") or "2")
end

function request()
  local body = '{"refreshToken":"zrt_bench_' .. counter .. '"}'
  counter = counter + step
  return wrk.format("POST", "/v1/auth/session/refresh",
    { ["Authorization"] = "Bearer pk_test_bench", ["Content-Type"] = "application/json" }, body)
end

function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d errors=%d duration_us=%d p50_us=%d p99_us=%d\n", summary.requests,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration, latency:percentile(50), latency:percentile(99)))
end
