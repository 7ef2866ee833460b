-- wrk: plain GETs of the URL's path (/healthz, /.well-known/oauth-authorization-server); reports the counts.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")
