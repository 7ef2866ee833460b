-- wrk: the soak's mixed load (docs/operations.md, "Soak"). Each thread cycles through eight requests: a code
-- exchange and a refresh (each of a seeded code or token never presented before, while the thread's share
-- lasts; then a session read in its place), three session reads, a start, /healthz and the discovery
-- document. Seeds from bench/pipeline/seed.sql; VERIFIER, CODES and SESSIONS from run.sh. Counts the
-- answers by status and prints one RESULT line and one STATUS line.
local threads = {}
local verifier = os.getenv("VERIFIER")
local challenge = os.getenv("CHALLENGE")
local codes = tonumber(os.getenv("CODES"))
local sessions = tonumber(os.getenv("SESSIONS"))
local count = tonumber(os.getenv("WRK_THREADS") or "2")

function setup(thread)
  thread:set("offset", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  n, code, token, statuses = 0, offset, offset, {}
end

local function session_read()
  local i = 1 + math.random(sessions) - 1
  return wrk.format("GET", "/v1/auth/session", { ["Authorization"] = "Bearer zat_bench_" .. i })
end

function request()
  n = n + 1
  local kind = n % 8
  if kind == 0 then
    if code > codes then return session_read() end
    local body = '{"code":"hoc_bench_' .. code .. '","codeVerifier":"' .. verifier .. '","redirectUri":"http://127.0.0.1:5000/cb"}'
    code = code + count
    return wrk.format("POST", "/v1/auth/handoff/exchange",
      { ["Authorization"] = "Bearer pk_test_bench", ["Content-Type"] = "application/json" }, body)
  elseif kind == 1 then
    if token > sessions then return session_read() end
    local body = '{"refreshToken":"zrt_bench_' .. token .. '"}'
    token = token + count
    return wrk.format("POST", "/v1/auth/session/refresh",
      { ["Authorization"] = "Bearer pk_test_bench", ["Content-Type"] = "application/json" }, body)
  elseif kind == 2 then
    return wrk.format("GET", "/v1/auth/zevid/start?client_id=pk_test_bench&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcb"
      .. "&state=s" .. n .. "&code_challenge=" .. challenge .. "&code_challenge_method=S256")
  elseif kind == 3 then
    return wrk.format("GET", "/healthz")
  elseif kind == 4 then
    return wrk.format("GET", "/.well-known/oauth-authorization-server")
  else
    return session_read()
  end
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local merged = {}
  for _, thread in ipairs(threads) do
    local s = thread:get("statuses")
    for status, c in pairs(s) do merged[status] = (merged[status] or 0) + c end
  end
  local parts = {}
  for status, c in pairs(merged) do table.insert(parts, status .. "=" .. c) end
  table.sort(parts)
  io.write(string.format("RESULT requests=%d errors=%d duration_us=%d p50_us=%d p99_us=%d\n", summary.requests,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration, latency:percentile(50), latency:percentile(99)))
  io.write("STATUS " .. table.concat(parts, " ") .. "\n")
end
