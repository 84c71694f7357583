import { CommandHarness } from './command-harness';
import { DemoHarness } from './demo-harness';
import type { Harness } from './harness';

/** `demo` is built in; `command:<type>` runs the operator-configured CLI for that harness type. */
export function harnessFor(name: string, commands: Record<string, string>): Harness {
  if (name === 'demo') return new DemoHarness();
  if (name.startsWith('command:')) {
    const type = name.slice('command:'.length);
    return new CommandHarness(type, commands[type]);
  }
  return new CommandHarness(name, commands[name]);
}
