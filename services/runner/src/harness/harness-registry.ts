import { parseHarnessName, type CliName } from '@conveyor/harnesses';
import { claudeProfile } from './cli/claude-profile';
import { CliHarness } from './cli/cli-harness';
import type { CliProfile } from './cli/cli-profile';
import { codexProfile } from './cli/codex-profile';
import { geminiProfile } from './cli/gemini-profile';
import { CommandHarness } from './command-harness';
import { DemoHarness } from './demo-harness';
import type { Harness } from './harness';

/** One profile per CLI kind of @conveyor/harnesses: a kind added there fails to compile here until it has one. */
const CLI_PROFILES: Record<CliName, CliProfile> = {
  claude: claudeProfile,
  codex: codexProfile,
  gemini: geminiProfile,
};

/**
 * The harness object for a run's harness name. `demo` is built in; `claude`, `codex` and `gemini` drive the vendor
 * CLIs installed with the runner (docs/harnesses.md) unless the operator configured a command for that type in
 * HARNESS_COMMANDS, which then replaces it; `command:<type>` always runs the operator-configured command.
 */
export function harnessFor(name: string, commands: Record<string, string>): Harness {
  if (name === 'demo') return new DemoHarness();
  const { type, command, cli } = parseHarnessName(name);
  if (cli && !command && !commands[type]) return new CliHarness(CLI_PROFILES[cli]);
  return new CommandHarness(type, commands[type]);
}
