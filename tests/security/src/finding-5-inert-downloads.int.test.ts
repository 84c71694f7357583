import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  apiCall,
  startExtraService,
  startPlatform,
  type ExtraService,
  type Json,
  type RunningPlatform,
} from '@conveyor/testing';

jest.setTimeout(120_000);

// The e2e suite's command-harness agent: it makes the API calls its prompt lists with its run-scoped key.
const AGENT = path.resolve(__dirname, '../../e2e/fixtures/api-calling-agent.js');
const HTML = '<!doctype html><script>fetch("/v1/agent/runs",{credentials:"include"})</script>';

describe('finding 5: downloads are inert and their tokens stay out of the logs', () => {
  let platform: RunningPlatform;
  let chatty: ExtraService;
  let runId: string;
  let artifactUid: string;

  beforeAll(async () => {
    platform = await startPlatform({
      env: { HARNESS_COMMANDS: JSON.stringify({ claude: `${process.execPath} ${AGENT}` }) },
    });
    // A second gateway at LOG_LEVEL=info, so its access log can be read.
    chatty = await startExtraService(platform, 'gateway', { LOG_LEVEL: 'info' });
    const out = path.join(os.tmpdir(), `agent-${randomUUID()}.json`);
    const report = {
      artifact_type: 'FILE',
      data: { filepath: 'out/page.html', mime_type: 'text/html' },
      content_base64: Buffer.from(HTML).toString('base64'),
    };
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: JSON.stringify({
        out,
        calls: [{ method: 'POST', path: '/harness-support/report-artifact', body: report }],
      }),
      config: { harness: { type: 'claude' } },
    });
    expect(created.status).toBe(200);
    runId = created.body.run_id as string;
    const deadline = Date.now() + 60_000;
    for (let state = ''; state !== 'SUCCEEDED'; await new Promise((r) => setTimeout(r, 200))) {
      state = (await apiCall(platform, 'GET', `/agent/runs/${runId}`)).body.state as string;
      if (['FAILED', 'ERROR'].includes(state) || Date.now() > deadline)
        throw new Error(`run ended ${state}\n${platform.logs().slice(-3000)}`);
    }
    const results = (
      JSON.parse(readFileSync(out, 'utf8')) as { results: Array<{ status: number; body: Json }> }
    ).results;
    expect(results[0]!.status).toBe(201);
    artifactUid = results[0]!.body.artifact_uid as string;
  });

  afterAll(async () => {
    await chatty?.stop();
    await platform?.stop();
  });

  /** A signed link of the platform, followed through the chatty gateway. */
  const viaChatty = (link: string) => link.replace(platform.apiUrl, `${chatty.url}/v1`);

  const expectInert = (res: Response) => {
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment\b/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/(^|;)\s*sandbox\s*(;|$)/);
    expect(csp).toContain("default-src 'none'");
  };

  it('an uploaded text/html artifact and a transcript download as attachments, sandboxed, never sniffed; no log line holds their tokens', async () => {
    const artifact = await apiCall(platform, 'GET', `/agent/artifacts/${artifactUid}`);
    const downloadUrl = (artifact.body.data as Json).download_url as string;
    const html = await fetch(viaChatty(downloadUrl));
    expectInert(html);
    expect(await html.text()).toBe(HTML);

    const redirect = await fetch(`${platform.apiUrl}/agent/runs/${runId}/transcript`, {
      headers: { authorization: `Bearer ${platform.apiKey}` },
      redirect: 'manual',
    });
    expect(redirect.status).toBe(302);
    const transcriptUrl = redirect.headers.get('location')!;
    expectInert(await fetch(viaChatty(transcriptUrl)));

    const tokens = [downloadUrl, transcriptUrl].map((url) => new URL(url).pathname.split('/').pop()!);
    // The access line is written when the response finishes, which the client may see first.
    const blobLines = () =>
      chatty
        .logs()
        .split('\n')
        .filter((line) => line.includes('"msg":"request"') && line.includes('"path":"/v1/blobs/{token}"'));
    for (const deadline = Date.now() + 10_000; blobLines().length < 2 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 100));
    expect(blobLines()).toHaveLength(2);
    for (const token of tokens) expect(chatty.logs()).not.toContain(token);
    expect(platform.logs()).not.toContain(tokens[0]);
  });
});
