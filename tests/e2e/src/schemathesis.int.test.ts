import { randomUUID } from 'node:crypto';
import {
  startScriptedLinear,
  startScriptedSlack,
  type ScriptedLinear,
  type ScriptedSlack,
} from '@conveyor/testing';
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
  // The providers an integration's registration checks its credentials with, reachable as in production (this machine
  // reaches neither Slack nor Linear): the fuzzer's credentials are refused there (400), not met by an outage (503).
  let slack: ScriptedSlack;
  let linear: ScriptedLinear;

  beforeAll(async () => {
    slack = await startScriptedSlack({ token: `xoxb-${randomUUID()}`, teamId: 'T0001', botUserId: 'U0001' });
    linear = await startScriptedLinear({
      apiKey: `lin_api_${randomUUID()}`,
      viewer: { id: 'u1', name: 'agent' },
    });
    platform = await startPlatform({
      env: {
        // Fuzzing sends a few thousand requests with one key; the rate limit is not what is under test here.
        RATE_LIMIT_PER_KEY_POINTS: '1000000',
        RATE_LIMIT_PER_TEAM_POINTS: '1000000',
        SLACK_API_URL: slack.url,
        LINEAR_API_URL: linear.url,
        EGRESS_ALLOWED_ADDRESSES: new URL(linear.url).host,
      },
    });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await slack?.close();
    await linear?.close();
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
