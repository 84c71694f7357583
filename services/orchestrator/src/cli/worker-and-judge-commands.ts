import type { Command } from 'commander';
import type { PrismaClient } from '@conveyor/db';
import { CatalogModule } from '../catalog/catalog-module';
import { loadCatalogConfig } from '../config';
import { createLogger } from '@conveyor/logger';
import { PrismaRunReferences } from '../runs/prisma-run-references';
import { dispatchJudgeRun } from '../scores/dispatch-judge-run';
import { createWorkerToken, revokeWorkerToken } from '../workers/worker-token';

type WithDb = <T>(fn: (db: PrismaClient) => Promise<T>) => Promise<void>;

const collect = (value: string, previous: string[]): string[] => [...previous, ...value.split(',')];

/** The CLI checks runs against the same catalog (models, environments, skills) as the orchestrator's configuration. */
const cliRunCatalog = (db: PrismaClient) =>
  new CatalogModule({
    config: loadCatalogConfig(),
    db,
    logger: createLogger({ service: 'conveyor-cli', level: 'warn' }),
  });

/**
 * `conveyor worker-token create|revoke` (self-hosted workers, docs/workers.md) and `conveyor judge dispatch`
 * (judge runs, docs/artifacts.md). The judge run is relayed to the queue by the orchestrator's outbox sweep.
 */
export function registerWorkerAndJudgeCommands(program: Command, withDb: WithDb): void {
  const tokens = program
    .command('worker-token')
    .description('manage self-hosted worker tokens (printed once; only a hash is stored)');
  tokens
    .command('create')
    .requiredOption('--team <teamId>', 'team whose workers use the token')
    .option('--name <name>', 'label', 'worker')
    .action((opts: { team: string; name: string }) =>
      withDb((db) => createWorkerToken(db, { teamId: opts.team, name: opts.name })),
    );
  tokens
    .command('revoke')
    .requiredOption('--id <tokenId>', 'token ID')
    .action((opts: { id: string }) => withDb((db) => revokeWorkerToken(db, opts.id)));

  program
    .command('judge')
    .description('judge runs (source RUN_SCORER) that score other runs')
    .command('dispatch')
    .requiredOption('--run <runId>', 'run to score')
    .option(
      '--evaluation <name>',
      'evaluation the judge reports (repeatable or comma-separated)',
      collect,
      [],
    )
    .option('--prompt <text>', 'judge prompt (a default naming the run and evaluations otherwise)')
    .option(
      '--config <json>',
      'AmbientAgentConfig of the judge run as JSON, e.g. {"harness":{"type":"claude"}}',
    )
    .option(
      '--harness <name>',
      'harness for AmbientAgentConfig-less runs (defaults to the platform default)',
      'demo',
    )
    .action(
      (opts: { run: string; evaluation: string[]; prompt?: string; config?: string; harness: string }) =>
        withDb((db) =>
          dispatchJudgeRun(
            {
              db,
              kickOutbox: () => undefined,
              defaultHarness: opts.harness,
              references: new PrismaRunReferences(db),
              catalog: cliRunCatalog(db),
            },
            {
              scoredRunId: opts.run,
              evaluations: opts.evaluation,
              prompt: opts.prompt,
              config: opts.config ? (JSON.parse(opts.config) as Record<string, unknown>) : undefined,
            },
          ),
        ),
    );
}
