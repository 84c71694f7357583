import { startPlatform, type RunningPlatform } from './platform';
import { runProgram, venvBin } from './python-tools';

/**
 * Schemathesis fuzzes every operation of the live gateway from the document the gateway itself serves: no 5xx,
 * documented statuses, bodies and content types. Fixed seed and bounded examples keep it reproducible and inside
 * CI's budget (docs/api-surface.md). The gateway also validates its own responses (VALIDATE_RESPONSES), so a body
 * the document does not promise surfaces as a 5xx here too.
 */
describe('Schemathesis against the live gateway', () => {
  let platform: RunningPlatform;

  beforeAll(async () => {
    // Fuzzing sends a few thousand requests with one key; the rate limit is not what is under test here.
    platform = await startPlatform({
      env: { RATE_LIMIT_PER_KEY_POINTS: '1000000', RATE_LIMIT_PER_TEAM_POINTS: '1000000' },
    });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('finds no server error and no response outside the document, for every operation', async () => {
    const origin = new URL(platform.apiUrl).origin;
    const result = await runProgram(venvBin('schemathesis'), [
      'run',
      `${origin}/v1/openapi.json`,
      '--url',
      origin,
      '--header',
      `Authorization: Bearer ${platform.apiKey}`,
      '--checks',
      'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance',
      '--phases',
      'examples,fuzzing',
      '--max-examples',
      '20',
      '--seed',
      '20261123',
      '--workers',
      '1',
      '--max-redirects',
      '0',
      '--request-timeout',
      '20',
      '--generation-deterministic',
      '--suppress-health-check',
      'all',
      '--no-color',
    ]);
    const output = `${result.stdout}\n${result.stderr}`;
    // On failure, show Schemathesis' own report of each failing operation (with a curl line to reproduce it).
    const failures = output.includes('FAILURES')
      ? output.slice(output.indexOf('FAILURES'), output.indexOf('SUMMARY')).slice(0, 30_000)
      : output.slice(-4000);
    const serverErrors = platform
      .logs()
      .split('\n')
      .filter((line) => line.includes('"level":"error"'))
      .slice(0, 20)
      .join('\n');
    expect({ code: result.code, failures: result.code === 0 ? '' : `${failures}\n${serverErrors}` }).toEqual({
      code: 0,
      failures: '',
    });
    // Every documented operation was selected and tested.
    const selected = /Selected: (\d+)\/(\d+)/.exec(output);
    const tested = /Tested: (\d+)/.exec(output);
    expect(selected?.[1]).toBe(selected?.[2]);
    expect(tested?.[1]).toBe(selected?.[2]);
  }, 600_000);
});
