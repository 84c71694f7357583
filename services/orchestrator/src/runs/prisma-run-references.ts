import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { findReachableEnvironment } from '../catalog/environment-access';
import { availableIdentityIds } from '../identities/identity-availability';
import type { RunReferences } from './run-references';

/** The references of a new run, read from PostgreSQL. */
export class PrismaRunReferences implements RunReferences {
  constructor(private readonly db: PrismaClient) {}

  findIdentity(teamId: string, identityId: string) {
    return this.db.agentIdentity.findFirst({ where: { id: identityId, teamId } });
  }

  availableIdentityIds(teamId: string) {
    return availableIdentityIds(this.db, teamId);
  }

  findEnvironment(caller: Caller, environmentId: string) {
    return findReachableEnvironment(this.db, caller, environmentId);
  }

  findRun(teamId: string, runId: string) {
    return this.db.run.findFirst({ where: { id: runId, teamId }, select: { id: true, ancestorIds: true } });
  }

  async conversationExists(teamId: string, conversationId: string): Promise<boolean> {
    const run = await this.db.run.findFirst({ where: { conversationId, teamId }, select: { id: true } });
    return run !== null;
  }

  async findMemberId(teamId: string, idOrEmail: string): Promise<string | null> {
    const user = await this.db.user.findFirst({
      where: { teamId, OR: [{ id: idOrEmail }, { email: { equals: idOrEmail, mode: 'insensitive' } }] },
      select: { id: true },
    });
    return user?.id ?? null;
  }
}
