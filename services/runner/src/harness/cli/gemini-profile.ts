import path from 'node:path';
import type { RunEvent } from '@conveyor/run-events';
import type { CliEventMapper, CliProfile, CliSetup, TurnEnd } from './cli-profile';
import { keptEvent, skillFile, textOf } from './cli-events';
import { packageFile } from './installed-package';

const geminiDir = (setup: CliSetup) => path.posix.join(setup.home, '.gemini');

/** Gemini CLI's name for a project in a HOME that has none yet: the working directory's base name, slugged. */
const projectSlug = (dir: string) =>
  path.posix
    .basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '') || 'project';

/** `~/.gemini/settings.json`: API-key auth (our per-run token), no telemetry or update checks, the run's MCP servers. */
function settingsJson(setup: CliSetup): string {
  const mcpServers = Object.fromEntries(
    setup.mcpServers.map((s) => [
      s.name,
      s.transport === 'stdio'
        ? { command: s.command, args: s.args, env: s.env }
        : { [s.transport === 'sse' ? 'url' : 'httpUrl']: s.url, headers: s.headers },
    ]),
  );
  return JSON.stringify(
    {
      security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      mcpServers,
    },
    null,
    2,
  );
}

/** `gemini --output-format stream-json`: init, message (assistant text arrives in deltas), tool_use, tool_result, error, result. */
class GeminiMapper implements CliEventMapper {
  private text = '';
  private lastText = '';

  map(event: Record<string, unknown>): { events: RunEvent[]; turnEnd?: TurnEnd } {
    if (event.type === 'message') {
      if (event.role === 'assistant') this.text += String(event.content ?? '');
      return { events: [] };
    }
    const events = this.flush();
    switch (event.type) {
      case 'init':
        return { events };
      case 'tool_use':
        events.push({
          kind: 'tool_call',
          call_id: String(event.tool_id),
          name: String(event.tool_name),
          input: event.parameters ?? {},
        });
        return { events };
      case 'tool_result': {
        const failed = event.status === 'error';
        events.push({
          kind: 'tool_result',
          call_id: String(event.tool_id),
          output: failed ? (event.error ?? event.output ?? null) : textOf(event.output),
          ...(failed ? { is_error: true } : {}),
        });
        return { events };
      }
      case 'error':
        events.push({
          kind: 'log',
          level: event.severity === 'warning' ? 'warn' : 'error',
          text: `gemini: ${String(event.message ?? JSON.stringify(event))}`,
        });
        return { events };
      case 'result': {
        const stats = (event.stats ?? {}) as { input_tokens?: number; output_tokens?: number };
        events.push({
          kind: 'usage',
          input_tokens: stats.input_tokens ?? 0,
          output_tokens: stats.output_tokens ?? 0,
        });
        const ok = event.status === 'success';
        const error = (event.error ?? {}) as { message?: string };
        return {
          events,
          turnEnd: { ok, message: ok ? this.lastText : (error.message ?? 'Gemini CLI reported an error') },
        };
      }
      default:
        events.push(keptEvent('gemini', event));
        return { events };
    }
  }

  /** Streamed assistant text becomes one message when something else happens. */
  flush(): RunEvent[] {
    if (!this.text) return [];
    this.lastText = this.text;
    this.text = '';
    return [{ kind: 'agent_message', text: this.lastText }];
  }
}

/**
 * Gemini CLI in headless mode (`-p`), approvals off (`--approval-mode yolo`). The session ID is the run ID; a follow-up
 * resumes it with `--resume <run id>`. Session files are `~/.gemini/tmp/<project>/chats/session-<minute>-<id prefix>.jsonl`;
 * resuming writes the whole conversation to the file of the current minute, so the newest is the session.
 */
export const geminiProfile: CliProfile = {
  name: 'gemini',
  command: () => [process.execPath, packageFile('@google/gemini-cli', 'bundle/gemini.js')],
  liveInput: false,
  files: (setup) => [
    { path: path.posix.join(geminiDir(setup), 'settings.json'), content: settingsJson(setup) },
    ...(setup.skill ? [skillFile(path.posix.join(geminiDir(setup), 'skills'), setup.skill)] : []),
  ],
  env: (setup) => ({
    GEMINI_API_KEY: setup.model.token,
    GOOGLE_GEMINI_BASE_URL: setup.model.baseUrls.gemini,
    // One process: no relaunch of itself with a larger heap, which would outlive a kill of the first.
    GEMINI_CLI_NO_RELAUNCH: 'true',
  }),
  args: (setup, message, session) => [
    '--output-format',
    'stream-json',
    '--approval-mode',
    'yolo',
    '--skip-trust',
    '--model',
    setup.model.model,
    ...(session ? ['--resume', setup.runId] : ['--session-id', setup.runId]),
    `--prompt=${message}`,
  ],
  sessionGlob: (setup) =>
    path.posix.join(geminiDir(setup), 'tmp', '*', 'chats', `session-*-${setup.runId.slice(0, 8)}.jsonl`),
  // A fresh HOME names the project directory after the working directory's slugged base name.
  restorePath: (setup, saved) =>
    path.posix.join('.gemini', 'tmp', projectSlug(setup.workspaceDir), 'chats', path.posix.basename(saved)),
  mapper: () => new GeminiMapper(),
};
