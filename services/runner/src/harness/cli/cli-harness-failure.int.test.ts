import { mkdir, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import type { RunEvent } from '@conveyor/run-events';
import { baseRunEnvironment, HOME_DIR_NAME } from '../../sandbox/run-environment';
import { UnsandboxedBackend } from '../../sandbox/unsandboxed-backend';
import { FollowupInbox } from '../followup-inbox';
import type { HarnessInput } from '../harness';
import { CliHarness } from './cli-harness';
import { geminiProfile } from './gemini-profile';

/**
 * A CLI that fails without a word on stderr. Gemini CLI reports its failures as `error` events on stdout; a run that
 * ended "exited with code 1" and nothing else in CI could not be explained afterwards.
 */
describe('a CLI that exits before finishing its turn', () => {
  it('names what the CLI said on stdout when stderr is silent', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'cli-harness-failure-'));
    const runId = 'run-failure';
    await mkdir(path.join(root, runId, HOME_DIR_NAME), { recursive: true });
    const sandbox = await new UnsandboxedBackend(
      createLogger({ service: 'test', level: 'silent' }),
      root,
      true,
    ).prepare({
      runId,
      allowedHosts: [],
      endpoints: [],
      limits: { wallClockMs: 60_000, maxProcesses: 64, memoryBytes: 1024 ** 3, diskBytes: 1024 ** 3 },
    });
    const failing = JSON.stringify({
      type: 'error',
      severity: 'error',
      message: 'Quota exceeded for gemini-2.5-pro',
    });
    const harness = new CliHarness({
      ...geminiProfile,
      // The profile's arguments follow as the script's positional parameters.
      command: () => ['/bin/sh', '-c', `echo '${failing}'; exit 1`, 'gemini'],
    });
    const input: HarnessInput = {
      runId,
      execution: 1,
      prompt: 'Do the thing',
      followups: [],
      config: {},
      mode: 'normal',
      debugSession: false,
      workspaceDir: sandbox.workspaceDir,
      attachments: [],
      modelAccess: {
        baseUrls: { anthropic: '', openai: '', gemini: '' },
        token: 'run-token',
        model: 'gemini-2.5-pro',
      },
    };
    const events: RunEvent[] = [];
    const outcome = await harness.run(input, {
      emit: (e) => events.push(e),
      inbox: new FollowupInbox(),
      signal: new AbortController().signal,
      sandbox,
      env: baseRunEnvironment({ runId, workspaceDir: sandbox.workspaceDir }),
    });
    expect(outcome).toMatchObject({
      state: 'FAILED',
      message:
        'The gemini CLI exited with code 1 before finishing its turn: gemini: Quota exceeded for gemini-2.5-pro',
    });
  });
});
