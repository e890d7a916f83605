-- wrk's summary as one JSON line (bench/support/loadRuns.ts reads it): counts, duration and latency percentiles in µs
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\nWRK_REPORT {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50Us":%d,"p99Us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
