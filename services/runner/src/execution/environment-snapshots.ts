import { createHash } from 'node:crypto';
import {
  repositoryDirectory,
  runSetupStep,
  setUpEnvironment,
  type EnvironmentSpec,
  type FetchRepository,
} from '../environment-setup';
import type { SnapshotStateName } from '@conveyor/run-events';
import { SetupFailure } from '../harness/harness';
import type { RunSandbox, SnapshotRef } from '../sandbox/run-sandbox';

/** Bumped when what a snapshot holds or how it is keyed changes: older snapshots then simply miss and age out. */
const SNAPSHOT_FORMAT = 1;

/**
 * The snapshot a run of this environment starts from (docs/snapshots.md): the team's, keyed by a hash of everything
 * that decides what setup produces — repositories (URL, directory, ref), setup commands, image, allowed hosts. None
 * for an environment with nothing to set up, one that opts out (`snapshot: false`), or a debug session.
 * The repositories' commits are not in the key: a run from the snapshot fetches its refs and, when a commit moved,
 * updates on top and runs setup again, and the snapshot is dropped so the next run makes a new one.
 */
export function snapshotRef(
  teamId: string,
  environment: EnvironmentSpec,
  debug: boolean,
): SnapshotRef | undefined {
  if (debug || environment.snapshot === false || !teamId) return undefined;
  // A repository the platform clones is a private one, on the run's own branch: its content is no one else's.
  if (environment.repositories.some((r) => r.clone === 'platform')) return undefined;
  if (environment.repositories.length + environment.setup_commands.length === 0) return undefined;
  const configuration = {
    format: SNAPSHOT_FORMAT,
    teamId,
    repositories: environment.repositories.map((r) => ({ url: r.url, directory: r.directory, ref: r.ref })),
    setup_commands: environment.setup_commands,
    docker_image: environment.docker_image ?? null,
    allowed_hosts: [...environment.allowed_hosts].sort(),
  };
  return { teamId, key: createHash('sha256').update(JSON.stringify(configuration)).digest('hex') };
}

/**
 * Brings a repository of a snapshot up to its ref (only new commits are fetched). Exit 0: it was current; 10: it
 * moved and the work tree now holds the new commit; anything else: it could not be fetched. "Moved" compares the
 * ref as cloned (origin/<ref>, or the tag) with the fetched one, not HEAD: a setup that commits or checks out in the
 * clone has not moved it.
 */
const REFRESH = [
  'cd -- "$1" || exit 2',
  'cloned=$(git rev-parse -q --verify "origin/${2:-HEAD}^{commit}" || git rev-parse -q --verify "${2:-HEAD}^{commit}")',
  'git fetch --quiet origin "${2:-HEAD}" || exit 2',
  '[ "$cloned" = "$(git rev-parse "FETCH_HEAD^{commit}")" ] && exit 0',
  'git reset --quiet --hard "FETCH_HEAD^{commit}" && exit 10',
  'exit 2',
].join('\n');

export interface EnvironmentPreparation {
  environment: EnvironmentSpec;
  sandbox: RunSandbox;
  ref: SnapshotRef | undefined;
  /** The workspace holds nothing of this run yet but its layout (no attachments), so it may become the snapshot. */
  capturable: boolean;
  env: Record<string, string>;
  signal: AbortSignal;
  /** The repositories the platform clones (`clone: "platform"`), fetched by the orchestrator. */
  fetchRepository?: FetchRepository;
  /** The timeline's setup step. */
  step: (status: 'started' | 'succeeded', detail?: string) => void;
  /** What became of the team's snapshot of this environment, for the environment's `snapshot` in the API. */
  snapshot: (state: SnapshotStateName, snapshotId?: string) => void;
  log: (level: 'info' | 'warn', text: string) => void;
}

/**
 * Sets the run's environment up: from its snapshot when the sandbox started on one (fetch, and setup again only when
 * a commit moved), otherwise cold, keeping the result as the snapshot when it may. A snapshot that cannot be made
 * costs the run nothing but the log line.
 */
/** Whether the environment has anything to set up (repositories to clone, commands to run). */
export const setsUp = (environment: EnvironmentSpec): boolean =>
  environment.repositories.length + environment.setup_commands.length > 0;

export async function setUpWithSnapshot(p: EnvironmentPreparation): Promise<void> {
  const { environment, sandbox, env, signal } = p;
  if (!setsUp(environment)) return;
  const report = (text: string) => p.log('info', text);
  if (sandbox.startedFrom) {
    p.step('started', `from snapshot ${sandbox.startedFrom}`);
    let moved: string[];
    try {
      moved = await refreshRepositories(environment, sandbox, env, signal);
    } catch (err) {
      // A snapshot whose clone cannot be fetched (a setup that broke its .git, a ref gone) would fail every later run
      // until it aged out: drop it, so the next run sets up from scratch.
      if (p.ref) await dropSnapshot(p, p.ref);
      throw err instanceof SetupFailure
        ? new SetupFailure(
            `${err.message} (snapshot ${sandbox.startedFrom} dropped: the next run sets up from scratch)`,
          )
        : err;
    }
    if (moved.length === 0) {
      p.snapshot('ready', sandbox.startedFrom);
      return p.step('succeeded', `started from snapshot ${sandbox.startedFrom}; setup skipped`);
    }
    report(`${moved.join(', ')} moved since snapshot ${sandbox.startedFrom}: running setup again`);
    if (p.ref) await dropSnapshot(p, p.ref);
    await setUpEnvironment(
      { ...environment, repositories: [] },
      sandbox,
      withoutRunValues(env),
      signal,
      report,
    );
    return p.step(
      'succeeded',
      `started from snapshot ${sandbox.startedFrom}; setup ran again on new commits`,
    );
  }
  // Setup of an environment that keeps snapshots prepares every later run, so it sees nothing of this one: not its
  // key (a setup writing its environment to a file would hand it to runs reading the snapshot while this one lives),
  // not its ID (it would be the first run's in every later one).
  const setupEnv = p.ref ? withoutRunValues(env) : env;
  if (sandbox.snapshotFailure)
    p.log(
      'warn',
      `The environment's snapshot could not be used (${sandbox.snapshotFailure}); setting up from scratch`,
    );
  const ref = p.capturable && sandbox.keepsSnapshots ? p.ref : undefined;
  p.step('started');
  if (ref) p.snapshot('building');
  try {
    await setUpEnvironment(environment, sandbox, setupEnv, signal, report, p.fetchRepository);
  } catch (err) {
    if (ref) p.snapshot('failed');
    throw err;
  }
  const made = ref ? await capture(sandbox, ref, p) : undefined;
  p.step('succeeded', made ? `made snapshot ${made}` : undefined);
}

async function dropSnapshot(p: EnvironmentPreparation, ref: SnapshotRef): Promise<void> {
  await p.sandbox.dropSnapshot?.(ref);
  p.snapshot('none');
}

const withoutRunValues = (env: Record<string, string>) => ({
  ...env,
  CONVEYOR_API_KEY: '',
  CONVEYOR_RUN_ID: '',
});

async function capture(
  sandbox: RunSandbox,
  ref: SnapshotRef,
  p: EnvironmentPreparation,
): Promise<string | undefined> {
  try {
    const made = await sandbox.captureSnapshot?.(ref);
    // None made: the store has it already, or another run is making it and reports that itself.
    p.snapshot('ready', made);
    return made;
  } catch (err) {
    p.log('warn', `The environment's snapshot could not be made: ${(err as Error).message}`);
    p.snapshot('failed');
    return undefined;
  }
}

/** Fetches each repository's ref in the snapshot's clone; returns the directories whose commit moved. */
async function refreshRepositories(
  environment: EnvironmentSpec,
  sandbox: RunSandbox,
  env: Record<string, string>,
  signal: AbortSignal,
): Promise<string[]> {
  const moved: string[] = [];
  for (const repo of environment.repositories) {
    const dir = repositoryDirectory(repo);
    const argv: [string, ...string[]] = ['/bin/sh', '-c', REFRESH, 'sh', dir, repo.ref ?? ''];
    const result = await runSetupStep(
      sandbox,
      { argv, env },
      signal,
      environment.setup_timeout_seconds,
      `fetching ${dir} on top of the snapshot`,
    );
    if (result.code === 10) moved.push(dir);
    else if (result.code !== 0)
      throw new SetupFailure(`Fetching ${dir} on top of the snapshot failed: ${result.output.trim()}`);
  }
  return moved;
}
