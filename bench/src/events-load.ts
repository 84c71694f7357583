// The load generator of bench:events, in its own process (forked by events-bench.ts): BENCH_EVENT_RATE run state
// changes per second for BENCH_SECONDS into the platform's database, written as the platform writes them (RunEvent
// rows; the record_outbound_event trigger fans each out to the subscribed endpoints and notifies the orchestrator).
// Batches every 100 ms; each event belongs to another of BENCH_RUNS runs, as a busy installation's would. IPC: sends
// {write_seconds, events, cpu_ms} (its own CPU time) when done.
import { createPrismaClient } from '@conveyor/db';

const RATE = Number(process.env.BENCH_EVENT_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 5000);
const PREFIX = process.env.BENCH_RUN_PREFIX ?? 'run';

async function main() {
  const db = createPrismaClient(process.env.DATABASE_URL!);
  const perTick = Math.round(RATE / 10);
  const total = RATE * SECONDS;
  const started = Date.now();
  for (let written = 0; written < total; written += perTick) {
    await db.$executeRaw`
      INSERT INTO "RunEvent" ("runId", kind, data)
      SELECT md5(${PREFIX} || ((${written} + g) % ${RUNS}))::uuid, 'state_changed',
             '{"kind":"state_changed","from":"INPROGRESS","to":"SUCCEEDED"}'::jsonb
        FROM generate_series(1, ${perTick}) g`;
    const wait = started + ((written + perTick) / RATE) * 1000 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  const cpu = process.cpuUsage();
  process.send!({
    write_seconds: (Date.now() - started) / 1000,
    events: total,
    cpu_ms: (cpu.user + cpu.system) / 1000,
  });
  await db.$disconnect();
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
