import path from 'node:path';
import type { CliName } from './cli-profile';

/** A file of an installed npm package (the CLIs are dependencies of the runner, pinned in its package.json). */
function packageFile(pkg: string, file: string): string {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
}

/**
 * How each CLI starts: Claude Code's native binary (its package's postinstall puts the platform build at
 * bin/claude.exe), and Codex's and Gemini CLI's Node entry points under this Node (Codex's launcher picks its
 * platform binary from an optional dependency). The sandbox sees the runner's installation read-only.
 */
export function cliCommand(name: CliName): [string, ...string[]] {
  switch (name) {
    case 'claude':
      return [packageFile('@anthropic-ai/claude-code', 'bin/claude.exe')];
    case 'codex':
      return [process.execPath, packageFile('@openai/codex', 'bin/codex.js')];
    case 'gemini':
      return [process.execPath, packageFile('@google/gemini-cli', 'bundle/gemini.js')];
  }
}
