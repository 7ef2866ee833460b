-- Shared by the wrk scripts of this folder (each loads it with dofile, next to itself).
-- `numbered_threads()`: each wrk thread takes interleaved numbers BASE + offset, + WRK_THREADS, … so no
-- seeded code or token is presented twice. `done` prints the one RESULT line run.sh reads.
local threads = {}

function numbered_threads(base)
  function setup(thread)
    thread:set("offset", #threads + 1)
    table.insert(threads, thread)
  end
  function init(args)
    counter = base + offset
    step = tonumber(os.getenv("WRK_THREADS") or "2")
  end
end

-- The next number of this thread.
function next_number()
  local n = counter
  counter = counter + step
  return n
end

function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d errors=%d duration_us=%d p50_us=%d p99_us=%d\n", summary.requests,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration, latency:percentile(50), latency:percentile(99)))
end
