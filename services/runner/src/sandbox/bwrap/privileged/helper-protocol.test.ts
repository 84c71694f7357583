import { randomUUID } from 'node:crypto';
import { helperRequestSchema } from './helper-protocol';

// What a compromised runner can put in a request: never a path or a uid the helper would act on.

const execRequest = () => ({
  op: 'exec',
  runId: randomUUID(),
  execId: 1,
  argv: ['true'],
  env: {},
  cwd: '/workspace',
  forwarders: [],
});
const limits = { diskBytes: 16 * 1024 * 1024, memoryBytes: 1 << 30, maxProcesses: 64 };

describe('the privileged helper’s requests', () => {
  it.each(['../../etc', '/etc/shadow', 'a'.repeat(36), `${randomUUID()}/..`, ''])(
    'refuses %j as a run ID',
    (runId) => {
      expect(helperRequestSchema.safeParse({ op: 'open', runId, limits }).success).toBe(false);
      expect(helperRequestSchema.safeParse({ op: 'release', runId, keep: false }).success).toBe(false);
    },
  );

  it('drops what a message adds: no uid, no workspace path, no bwrap option reaches the helper', () => {
    const exec = execRequest();
    const parsed = helperRequestSchema.parse({
      ...exec,
      uid: 0,
      workspaceDir: '/etc',
      bwrapOptions: ['--bind', '/', '/'],
    });
    expect(parsed).toEqual(exec);
  });

  it('refuses a forwarder socket outside the run’s socket directory and an unknown operation', () => {
    const exec = { op: 'exec', runId: randomUUID(), execId: 1, argv: ['true'], env: {}, cwd: '/workspace' };
    expect(
      helperRequestSchema.safeParse({
        ...exec,
        forwarders: [{ port: 3128, socketName: '../../run/docker.sock' }],
      }).success,
    ).toBe(false);
    expect(helperRequestSchema.safeParse({ op: 'chown', path: '/etc/shadow' }).success).toBe(false);
  });
});
