import autocannon from 'autocannon';
import type { AutocannonTarget } from './autocannon-target';

/**
 * The load generator's own process: runs autocannon against one target and prints its summary as JSON on stdout,
 * so the client never shares an event loop (or a core's time slice) with the server it measures.
 */
const target = JSON.parse(process.env.BENCH_TARGET ?? '{}') as AutocannonTarget;

let counter = 0;
const instance = autocannon(
  {
    url: target.url,
    connections: target.connections,
    duration: target.durationSeconds,
    ...(target.overallRate !== undefined && { overallRate: target.overallRate }),
    requests: [
      {
        method: target.method,
        headers: target.headers,
        ...(target.body !== undefined && { body: target.body }),
        // A fresh delivery ID per request where the target needs one (every webhook delivery is a new one).
        ...(target.uniqueHeader !== undefined && {
          setupRequest: (req) => ({
            ...req,
            headers: {
              ...req.headers,
              [target.uniqueHeader!.name]: `${target.uniqueHeader!.prefix}-${counter++}`,
            },
          }),
        }),
      },
    ],
  },
  (err, result) => {
    if (err) {
      console.error(err);
      process.exit(1);
    }
    const codes: Record<string, { count?: number }> = result.statusCodeStats ?? {};
    const ok = codes[String(target.expectStatus)]?.count ?? 0;
    console.log(
      JSON.stringify({
        requests: result.requests.total,
        expected_status: target.expectStatus,
        expected: ok,
        other_status: result.requests.total - ok,
        errors: result.errors,
        timeouts: result.timeouts,
        seconds: result.duration,
        per_second: Number((ok / result.duration).toFixed(1)),
        p50_ms: result.latency.p50,
        p90_ms: result.latency.p90,
        p99_ms: result.latency.p99,
        max_ms: result.latency.max,
        status_codes: Object.fromEntries(Object.entries(codes).map(([code, s]) => [code, s.count])),
      }),
    );
  },
);
process.once('SIGTERM', () => instance.stop());
