import path from 'node:path';

/** Directory under the workspace that serves as HOME inside the sandbox (CLI state, sessions, caches). */
export const HOME_DIR_NAME = '.home';

/** The directories every run's workspace has: its HOME and `attachments/`. */
export function workspaceDirs(workspaceDir: string): string[] {
  return [path.posix.join(workspaceDir, HOME_DIR_NAME), path.posix.join(workspaceDir, 'attachments')];
}

/**
 * The environment every process of a run starts from: an allow-list, never the runner's own environment (which
 * holds DATABASE_URL, REDIS_URL, KAFKA_BROKERS and keys). Callers add what their process needs on top.
 */
export function baseRunEnvironment(run: {
  runId: string;
  workspaceDir: string;
  runApiKey?: string;
  apiBaseUrl?: string;
}): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: path.join(run.workspaceDir, HOME_DIR_NAME),
    LANG: 'C.UTF-8',
    CONVEYOR_RUN_ID: run.runId,
    CONVEYOR_WORKSPACE: run.workspaceDir,
    // The agent's credential for harness support (report-artifact, judge scores); dies with the execution.
    CONVEYOR_API_KEY: run.runApiKey ?? '',
    CONVEYOR_API_BASE_URL: run.apiBaseUrl ?? '',
  };
}

/** The proxy variables of every command of a run: everything but `noProxy` goes through its egress filter at `proxy`. */
export const proxyEnvironment = (proxy: string, noProxy: string): Record<string, string> => ({
  HTTP_PROXY: proxy,
  HTTPS_PROXY: proxy,
  http_proxy: proxy,
  https_proxy: proxy,
  NO_PROXY: noProxy,
  no_proxy: noProxy,
});
