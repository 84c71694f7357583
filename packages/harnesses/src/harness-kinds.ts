/**
 * The built-in CLI harness kinds (docs/harnesses.md): the one list the gateway's agent-config schema, the
 * orchestrator's catalog and credentials, and the runner's CLI profiles are typed from. Adding a CLI starts here.
 */
export const CLI_KINDS = {
  claude: {
    /** The wire protocol the CLI speaks to its model (the runner's model proxy has one route per protocol). */
    provider: 'anthropic',
    /** Model catalog providers whose models this CLI uses when a model names no harnesses. */
    catalogProviders: ['anthropic'],
    /** Where a run's `harness_auth_secrets` names the team secret holding the CLI's key. */
    secretField: 'claude_auth_secret_name',
    /** The secret used when the run names none. */
    defaultSecretName: 'ANTHROPIC_API_KEY',
  },
  codex: {
    provider: 'openai',
    catalogProviders: ['openai'],
    secretField: 'codex_auth_secret_name',
    defaultSecretName: 'OPENAI_API_KEY',
  },
  gemini: {
    provider: 'gemini',
    catalogProviders: ['google', 'gemini'],
    secretField: 'gemini_auth_secret_name',
    defaultSecretName: 'GEMINI_API_KEY',
  },
} as const;

/** A built-in CLI; also the name of the runner's profile for it (`services/runner/src/harness/cli/<name>-profile.ts`). */
export type CliName = keyof typeof CLI_KINDS;

export type CliKind = (typeof CLI_KINDS)[CliName];

/** The `harness_auth_secrets` field names, one per CLI. */
export type CliSecretField = CliKind['secretField'];

export const CLI_NAMES = Object.keys(CLI_KINDS) as [CliName, ...CliName[]];

export const isCliName = (name: string): name is CliName => Object.hasOwn(CLI_KINDS, name);

const COMMAND_PREFIX = 'command:';

/** What a stored harness name (`demo`, `claude`, `command:claude`, `command:aider`) asks the runner to run. */
export interface HarnessName {
  /** The name without `command:`: the key of the operator's command in HARNESS_COMMANDS. */
  type: string;
  /** `command:<type>`: always the operator's command, never the built-in CLI. */
  command: boolean;
  /** The CLI the harness drives, or stands in for as an operator's adapter; it then reaches a model with a key. */
  cli: CliName | undefined;
}

export function parseHarnessName(name: string): HarnessName {
  const command = name.startsWith(COMMAND_PREFIX);
  const type = command ? name.slice(COMMAND_PREFIX.length) : name;
  return { type, command, cli: isCliName(type) ? type : undefined };
}

/**
 * The harness name a run stores, from its config: `harness.type` absent or `oz` = the installation's default
 * harness; `claude`, `codex` and `gemini` name the built-in CLIs.
 */
export function harnessNameFromConfig(config: Record<string, unknown>, defaultHarness: string): string {
  const harness = config.harness as { type?: string } | undefined;
  const type = harness?.type ?? 'oz';
  return type === 'oz' ? defaultHarness : type;
}
