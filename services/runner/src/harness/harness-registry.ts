import { claudeProfile } from './cli/claude-profile';
import { CliHarness } from './cli/cli-harness';
import type { CliName, CliProfile } from './cli/cli-profile';
import { codexProfile } from './cli/codex-profile';
import { geminiProfile } from './cli/gemini-profile';
import { CommandHarness } from './command-harness';
import { DemoHarness } from './demo-harness';
import type { Harness } from './harness';

const CLI_PROFILES: Record<CliName, CliProfile> = {
  claude: claudeProfile,
  codex: codexProfile,
  gemini: geminiProfile,
};

/**
 * `demo` is built in; `claude`, `codex` and `gemini` drive the vendor CLIs installed with the runner
 * (docs/harnesses.md) unless the operator configured a command for that type in HARNESS_COMMANDS, which then
 * replaces it; `command:<type>` always runs the operator-configured command.
 */
export function harnessFor(name: string, commands: Record<string, string>): Harness {
  if (name === 'demo') return new DemoHarness();
  if (name in CLI_PROFILES && !commands[name]) return new CliHarness(CLI_PROFILES[name as CliName]);
  const type = name.startsWith('command:') ? name.slice('command:'.length) : name;
  return new CommandHarness(type, commands[type]);
}
