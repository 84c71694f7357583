import { ratios, runAutocannon, type AutocannonTarget } from './autocannon-target';
import { startBaseline } from './baseline-server';
import {
  reportServerErrors,
  CONNECTIONS,
  DURATION_SECONDS,
  WARMUP_SECONDS,
  printJson,
  progress,
  startBenchPlatform,
} from './bench-platform';

/**
 * The public API through the real gateway → orchestrator → PostgreSQL: POST /v1/agent/runs (with the outbox relay to
 * BullMQ) and GET /v1/agent/runs?limit=20 (first page, default sort, over the runs just created), each against a
 * bare express server in its own process answering the same request with a body of the same shape, all in one run.
 * autocannon runs in its own process. JSON on stdout, progress on stderr. See bench/README.md.
 */
async function main(): Promise<void> {
  const createBody = JSON.stringify({
    prompt: 'benchmark run',
    title: 'bench',
    metadata: { bench: 'create-run' },
  });
  progress('starting the platform (without a runner, so runs stay queued)…');
  const platform = await startBenchPlatform();
  let baseline: Awaited<ReturnType<typeof startBaseline>> | undefined;
  try {
    const auth = { authorization: `Bearer ${platform.apiKey}` };
    const listUrl = `${platform.apiUrl}/agent/runs?limit=20`;
    baseline = await startBaseline('bare-express-server');
    const create = (
      url: string,
      headers: Record<string, string>,
      durationSeconds = DURATION_SECONDS,
    ): AutocannonTarget => ({
      url: `${url}/agent/runs`,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: createBody,
      connections: CONNECTIONS,
      durationSeconds,
      expectStatus: 200,
    });
    const list = (
      url: string,
      headers: Record<string, string>,
      durationSeconds = DURATION_SECONDS,
    ): AutocannonTarget => ({
      url: `${url}/agent/runs?limit=20`,
      method: 'GET',
      headers,
      connections: CONNECTIONS,
      durationSeconds,
      expectStatus: 200,
    });
    const bareApi = `${baseline.url}/v1`;
    progress('warming up…');
    await runAutocannon(create(bareApi, {}, WARMUP_SECONDS));
    await runAutocannon(create(platform.apiUrl, auth, WARMUP_SECONDS));
    progress(
      `measuring the bare express baseline (POST, ${DURATION_SECONDS} s, ${CONNECTIONS} connections)…`,
    );
    const bareCreate = await runAutocannon(create(bareApi, {}));
    progress('measuring create-run through the gateway…');
    const gatewayCreate = await runAutocannon(create(platform.apiUrl, auth));
    // The bare GET answers with the gateway's real first page, captured now that the runs exist.
    baseline.stop();
    const page = await (await fetch(listUrl, { headers: auth })).text();
    baseline = await startBaseline('bare-express-server', { BENCH_LIST_BODY: page });
    await runAutocannon(list(`${baseline.url}/v1`, {}, WARMUP_SECONDS));
    progress('measuring the bare express baseline (GET)…');
    const bareList = await runAutocannon(list(`${baseline.url}/v1`, {}));
    progress('measuring the first page of runs through the gateway…');
    const gatewayList = await runAutocannon(list(platform.apiUrl, auth));
    reportServerErrors(platform, [bareCreate, gatewayCreate, bareList, gatewayList]);
    printJson({
      benchmark: 'api',
      connections: CONNECTIONS,
      duration_seconds: DURATION_SECONDS,
      list_page_bytes: Buffer.byteLength(page),
      runs_listed: gatewayCreate.expected,
      create_run: {
        baseline: { name: 'bare express POST (same body, same response shape)', ...bareCreate },
        gateway: { name: 'POST /v1/agent/runs (gateway → gRPC → PostgreSQL + outbox)', ...gatewayCreate },
        ratios: ratios(gatewayCreate, bareCreate),
      },
      list_first_page: {
        baseline: { name: 'bare express GET answering the same page', ...bareList },
        gateway: { name: 'GET /v1/agent/runs?limit=20 (gateway → gRPC → PostgreSQL)', ...gatewayList },
        ratios: ratios(gatewayList, bareList),
      },
    });
  } finally {
    baseline?.stop();
    await platform.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
