-- wrk: each request redeems the next unused authorization code `hoc_bench_<n>` of this measurement's range
-- (BASE + 1 …); threads take interleaved numbers so no code is presented twice. VERIFIER from run.sh.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
local verifier = os.getenv("VERIFIER")
local base = tonumber(os.getenv("BASE") or "0")
numbered_threads(base)

function request()
  local body = '{"code":"hoc_bench_' .. next_number() .. '","codeVerifier":"' .. verifier .. '","redirectUri":"http://127.0.0.1:5000/cb"}'
  return wrk.format("POST", "/v1/auth/handoff/exchange",
    { ["Authorization"] = "Bearer pk_test_bench", ["Content-Type"] = "application/json" }, body)
end
