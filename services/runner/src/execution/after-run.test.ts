import { fakeContext, fakeSandbox, finishedProcess } from '../test-support/execution-fakes';
import { finishWork, MAX_SESSION_BYTES, type AfterRunPorts } from './after-run';
import type { HarnessRun } from './harness-drive';

const noRepositories = { repositories: [], setup_commands: [], allowed_hosts: [] };
const oneRepository = { ...noRepositories, repositories: [{ url: 'https://git.example.com/acme/app.git' }] };
const ran = (over: Partial<HarnessRun['outcome']> = {}): HarnessRun => ({
  input: {} as HarnessRun['input'],
  env: {},
  outcome: { state: 'SUCCEEDED', message: 'done', ...over } as HarnessRun['outcome'],
});

function ports() {
  const files: Array<{ filepath: string; content: Buffer }> = [];
  const value: AfterRunPorts = {
    link: { call: async () => ({}) } as never,
    reportFile: async (_run, file) => {
      files.push(file);
      return { artifact_uid: 'a1' };
    },
  };
  return { ports: value, files };
}

const PATCH = 'diff --git a/app/x b/app/x\n+the key sk-secret\n';

describe('finishWork', () => {
  it('succeeds with the harness’s message when there is no repository to compare', async () => {
    const { ctx } = fakeContext();
    const { sandbox, commands } = fakeSandbox();
    expect(await finishWork(ctx, ports().ports, sandbox, noRepositories, ran())).toEqual({
      state: 'SUCCEEDED',
      message: 'done',
      transcript: undefined,
      session: undefined,
    });
    expect(commands).toEqual([]);
  });

  it('records the repositories’ changes as a redacted patch artifact', async () => {
    const { ctx, events } = fakeContext();
    ctx.reporter.redactor.add('sk-secret');
    const { sandbox } = fakeSandbox();
    sandbox.exec = () => finishedProcess(0, PATCH);
    const { ports: p, files } = ports();
    const done = await finishWork(ctx, p, sandbox, oneRepository, ran());
    expect(done).toMatchObject({ state: 'SUCCEEDED', message: 'done' });
    expect(files[0]!.filepath).toBe('conveyor-run-run-1-1.patch');
    expect(files[0]!.content.toString()).not.toContain('sk-secret');
    expect(events.at(-1)).toMatchObject({ kind: 'log', text: expect.stringContaining('1 file(s) changed') });
  });

  it('says so when the agent changed no files', async () => {
    const { ctx } = fakeContext();
    const { sandbox } = fakeSandbox();
    expect(await finishWork(ctx, ports().ports, sandbox, oneRepository, ran())).toMatchObject({
      state: 'SUCCEEDED',
      message: 'done (the agent changed no files)',
    });
  });

  it('reports a cancelled execution as CANCELLED with its redacted transcript, recording nothing', async () => {
    const { ctx, abort } = fakeContext();
    ctx.reporter.redactor.add('sk-secret');
    abort.abort();
    const { sandbox, commands } = fakeSandbox();
    const done = await finishWork(
      ctx,
      ports().ports,
      sandbox,
      oneRepository,
      ran({ transcript: Buffer.from('sk-secret') }),
    );
    expect(done.state).toBe('CANCELLED');
    expect(done.transcript!.toString()).not.toContain('sk-secret');
    expect(commands).toEqual([]);
  });

  it('drops a session too large for CompleteRun, and the run’s log says so', async () => {
    const { ctx, events } = fakeContext();
    const { sandbox } = fakeSandbox();
    const session = { path: 's.jsonl', content: Buffer.alloc(MAX_SESSION_BYTES + 1) };
    const done = await finishWork(ctx, ports().ports, sandbox, noRepositories, ran({ session }));
    expect(done.session).toBeUndefined();
    expect(events).toContainEqual(expect.objectContaining({ kind: 'log', level: 'warn' }));
  });

  it('passes on a failed outcome with its code', async () => {
    const { ctx } = fakeContext();
    const { sandbox } = fakeSandbox();
    const outcome = ran({
      state: 'FAILED',
      message: 'no',
      errorCode: 'external_authentication_required',
    } as never);
    expect(await finishWork(ctx, ports().ports, sandbox, noRepositories, outcome)).toMatchObject({
      state: 'FAILED',
      errorCode: 'external_authentication_required',
    });
  });
});
