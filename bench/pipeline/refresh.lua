-- wrk: each request rotates the next seeded refresh token `zrt_bench_<n>` of this measurement's range
-- (BASE + 1 …), each a different session's current token; threads take interleaved numbers.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
local base = tonumber(os.getenv("BASE") or "0")
numbered_threads(base)

function request()
  local body = '{"refreshToken":"zrt_bench_' .. next_number() .. '"}'
  return wrk.format("POST", "/v1/auth/session/refresh",
    { ["Authorization"] = "Bearer pk_test_bench", ["Content-Type"] = "application/json" }, body)
end
