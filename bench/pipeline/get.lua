-- wrk: plain GETs of the URL's path (/healthz, /.well-known/oauth-authorization-server); reports the counts.
function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d errors=%d duration_us=%d p50_us=%d p99_us=%d\n", summary.requests,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration, latency:percentile(50), latency:percentile(99)))
end
