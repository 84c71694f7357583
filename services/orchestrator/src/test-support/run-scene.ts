import type { PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import { uniqueName } from '@conveyor/testing';
import type { Caller } from '../auth/caller';
import { createTeam, createUser } from '../auth/team-admin';
import { CatalogModule } from '../catalog/catalog-module';
import { ModelCatalog } from '../catalog/model-catalog';
import { loadCatalogConfig } from '../config';
import type { CreateRunDeps } from '../runs/create-run';
import { PrismaRunReferences } from '../runs/prisma-run-references';
import type { ExecutionOutcome, RunnerExecution } from '../runner/runner-messages';

/** A new team with one admin user, as the caller its requests act for. */
export async function teamAdmin(db: PrismaClient, teamName: string): Promise<Caller> {
  const team = await createTeam(db, teamName);
  const user = await createUser(db, { teamId: team.id, email: `${uniqueName('u')}@x.dev` });
  return {
    team_id: team.id,
    principal_type: 'USER',
    principal_id: user.id,
    role: 'ADMIN',
    api_key_id: '',
    run_id: '',
    display_name: '',
    email: '',
  };
}

/** What createRun needs over a real database: the default catalog and its skills, one model unless told. */
export function runDeps(
  db: PrismaClient,
  options: { defaultHarness?: string; models?: ModelCatalog } = {},
): CreateRunDeps {
  return {
    db,
    kickOutbox: () => undefined,
    defaultHarness: options.defaultHarness ?? 'demo',
    references: new PrismaRunReferences(db),
    catalog: {
      skills: new CatalogModule({
        config: loadCatalogConfig({}),
        db,
        logger: createLogger({ service: 'test', level: 'silent' }),
      }).skills,
      models: options.models ?? new ModelCatalog({ models: [{ id: 'm', provider: 'anthropic' }] }),
    },
  };
}

/** The runner's report that an execution ended SUCCEEDED, with nothing else to record. */
export const succeeded = (execution: RunnerExecution): ExecutionOutcome => ({
  ...execution,
  state: 'SUCCEEDED',
  message: '',
  error_code: '',
  setup_failed: false,
  transcript: Buffer.alloc(0),
  session: null,
  events_json: [],
});
