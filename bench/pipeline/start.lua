-- wrk: GET /v1/auth/zevid/start with valid parameters and no cookie (a new browser each time, so each start
-- mints a browser binding); CHALLENGE from run.sh. The answer is a 303 to the sign-in page.
local challenge = os.getenv("CHALLENGE")
local n = 0

function request()
  n = n + 1
  return wrk.format("GET", "/v1/auth/zevid/start?client_id=pk_test_bench&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcb"
    .. "&state=s" .. n .. "&code_challenge=" .. challenge .. "&code_challenge_method=S256")
end

function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d errors=%d duration_us=%d p50_us=%d p99_us=%d\n", summary.requests,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration, latency:percentile(50), latency:percentile(99)))
end
