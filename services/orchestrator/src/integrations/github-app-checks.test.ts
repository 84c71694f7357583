import type { PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import { GitHubAppChecks, type CheckRunDeps } from './github-app-checks';

describe('GitHubAppChecks', () => {
  it('never rejects, not even when the database is down: every runner claim asks it and nobody waits', async () => {
    const outage = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    const db = { run: { findUnique: () => Promise.reject(outage) } } as unknown as PrismaClient;
    const checks = new GitHubAppChecks({
      db,
      logger: createLogger({ service: 'test', level: 'silent' }),
    } as unknown as CheckRunDeps);
    await expect(checks.started('run-1')).resolves.toBeUndefined();
    await expect(checks.completed('run-1')).resolves.toBeUndefined();
  });
});
