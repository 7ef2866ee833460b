-- wrk: GET /v1/auth/zevid/start with valid parameters and no cookie (a new browser each time, so each start
-- mints a browser binding); CHALLENGE from run.sh. The answer is a 303 to the sign-in page.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
local challenge = os.getenv("CHALLENGE")
local n = 0

function request()
  n = n + 1
  return wrk.format("GET", "/v1/auth/zevid/start?client_id=pk_test_bench&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcb"
    .. "&state=s" .. n .. "&code_challenge=" .. challenge .. "&code_challenge_method=S256")
end
