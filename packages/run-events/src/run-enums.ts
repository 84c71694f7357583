/** Enumerations of the run record as the public API spells them (contract §2.1). */
export const RUN_SOURCES = [
  'LINEAR',
  'API',
  'SLACK',
  'LOCAL',
  'SCHEDULED_AGENT',
  'WEB_APP',
  'GITHUB_ACTION',
  'CLOUD_MODE',
  'CLI',
  'JIRA',
  'SELF_IMPROVEMENT',
  'GITHUB_WEBHOOK',
  'GITLAB_WEBHOOK',
  'AUTOFIX',
  'RUN_SCORER',
  'ORCHESTRATION',
] as const;
export type RunSource = (typeof RUN_SOURCES)[number];

export const EXECUTION_LOCATIONS = ['LOCAL', 'REMOTE'] as const;
export type ExecutionLocation = (typeof EXECUTION_LOCATIONS)[number];

export const ARTIFACT_TYPES = ['PLAN', 'PULL_REQUEST', 'SCREENSHOT', 'FILE', 'EXTERNAL_REFERENCE'] as const;
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];
