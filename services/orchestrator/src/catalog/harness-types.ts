/**
 * The built-in CLI harnesses (docs/harnesses.md): which provider's wire protocol each speaks, where the run names
 * the team secret holding its key (`harness_auth_secrets`), and the secret used when the run names none.
 */
export const CLI_HARNESSES = {
  claude: {
    provider: 'anthropic',
    secretField: 'claude_auth_secret_name',
    defaultSecretName: 'ANTHROPIC_API_KEY',
  },
  codex: { provider: 'openai', secretField: 'codex_auth_secret_name', defaultSecretName: 'OPENAI_API_KEY' },
  gemini: { provider: 'gemini', secretField: 'gemini_auth_secret_name', defaultSecretName: 'GEMINI_API_KEY' },
} as const;

export type CliHarness = keyof typeof CLI_HARNESSES;

export const isCliHarness = (name: string): name is CliHarness => Object.hasOwn(CLI_HARNESSES, name);

/** The CLI a stored harness name drives (`claude`, or an operator's `command:claude` adapter), if any. */
export function cliHarnessOf(harness: string): CliHarness | undefined {
  const type = harness.startsWith('command:') ? harness.slice('command:'.length) : harness;
  return isCliHarness(type) ? type : undefined;
}

/**
 * The harness a run executes: `harness.type` absent or `oz` = the installation's DEFAULT_HARNESS; `claude`, `codex`
 * and `gemini` name the built-in CLI harnesses (a runner may replace one with an operator command, HARNESS_COMMANDS).
 */
export function harnessFor(config: Record<string, unknown>, defaultHarness: string): string {
  const harness = config.harness as { type?: string } | undefined;
  const type = harness?.type ?? 'oz';
  return type === 'oz' ? defaultHarness : type;
}
