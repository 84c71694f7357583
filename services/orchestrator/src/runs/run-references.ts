import type { AgentIdentity, Environment } from '@conveyor/db';
import type { Caller } from '../auth/caller';

/**
 * The reads that deciding a new run makes (create-run.ts prepareRun, resolve-run-catalog.ts): what each reference
 * names, within the caller's team. The rules applied to the answers stay with the callers, so they are tested
 * without a database; prisma-run-references.ts is the PostgreSQL one.
 */
export interface RunReferences {
  /** The agent identity with this ID in the team. */
  findIdentity(teamId: string, identityId: string): Promise<AgentIdentity | null>;
  /** The team's identities its plan lets run (identities/identity-availability.ts). */
  availableIdentityIds(teamId: string): Promise<ReadonlySet<string>>;
  /** The environment with this ID if the caller can reach it (catalog/environment-access.ts). */
  findEnvironment(caller: Caller, environmentId: string): Promise<Environment | null>;
  /** The run with this ID in the team, with its ancestors (parent first). */
  findRun(teamId: string, runId: string): Promise<{ id: string; ancestorIds: string[] } | null>;
  /** Whether a run of the team belongs to this conversation (a UUID). */
  conversationExists(teamId: string, conversationId: string): Promise<boolean>;
  /** The user ID of the team member whose user ID or email (case-insensitive) this is. */
  findMemberId(teamId: string, idOrEmail: string): Promise<string | null>;
}
