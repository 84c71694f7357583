import path from 'node:path';
import type { RunEvent } from '@conveyor/run-events';
import type { CliEventMapper, CliProfile, CliSetup, TurnEnd } from './cli-profile';
import { keptEvent, skillFile, textOf } from './cli-events';
import { packageFile } from './installed-package';
import type { McpServer } from './mcp-servers';

/** Effort levels `claude --effort` accepts. */
const EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

const configDir = (setup: CliSetup) => path.posix.join(setup.home, '.claude');

function mcpConfig(servers: McpServer[]): string {
  const entries = servers.map((s) => [
    s.name,
    s.transport === 'stdio'
      ? { type: 'stdio', command: s.command, args: s.args, env: s.env }
      : { type: s.transport, url: s.url, headers: s.headers },
  ]);
  return JSON.stringify({ mcpServers: Object.fromEntries(entries) });
}

type ModelUsage = {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
  costUSD?: number;
};

/** The usage of the turn a `result` reports (`usage` and `total_cost_usd` add up the whole process). */
function turnUsage(result: Record<string, unknown>): RunEvent {
  const byModel = Object.values(
    (result.model_usage_since_last_result ?? result.modelUsage ?? {}) as Record<string, ModelUsage>,
  );
  const sum = (pick: (u: ModelUsage) => number | undefined) =>
    byModel.reduce((total, u) => total + (pick(u) ?? 0), 0);
  return {
    kind: 'usage',
    input_tokens: sum(
      (u) => (u.inputTokens ?? 0) + (u.cacheReadInputTokens ?? 0) + (u.cacheCreationInputTokens ?? 0),
    ),
    output_tokens: sum((u) => u.outputTokens),
    cost_usd: sum((u) => u.costUSD),
  };
}

/** Claude Code's stream-json output (`claude -p --output-format stream-json --verbose`). */
class ClaudeMapper implements CliEventMapper {
  map(event: Record<string, unknown>): { events: RunEvent[]; turnEnd?: TurnEnd } {
    const message = event.message as { content?: unknown } | undefined;
    const blocks = Array.isArray(message?.content) ? (message.content as Array<Record<string, unknown>>) : [];
    switch (event.type) {
      case 'assistant':
        return {
          events: blocks.flatMap((b): RunEvent[] => {
            if (b.type === 'text') return [{ kind: 'agent_message', text: String(b.text ?? '') }];
            if (b.type === 'tool_use')
              return [{ kind: 'tool_call', call_id: String(b.id), name: String(b.name), input: b.input }];
            return [keptEvent('claude', { type: `assistant.${String(b.type)}`, ...b })];
          }),
        };
      case 'user':
        // The CLI's echo of our own messages is already on the run (the orchestrator records prompt and follow-ups).
        return {
          events: blocks
            .filter((b) => b.type === 'tool_result')
            .map((b): RunEvent => ({
              kind: 'tool_result',
              call_id: String(b.tool_use_id),
              output: textOf(b.content),
              ...(b.is_error === true ? { is_error: true } : {}),
            })),
        };
      case 'result': {
        const ok = event.subtype === 'success' && event.is_error !== true;
        const text = typeof event.result === 'string' ? event.result : '';
        const errors = Array.isArray(event.errors) ? event.errors.map(String).join('; ') : '';
        return {
          events: [turnUsage(event)],
          turnEnd: {
            ok,
            message: ok ? text : text || errors || `Claude Code ended with ${String(event.subtype)}`,
          },
        };
      }
      default:
        return { events: [keptEvent('claude', event)] };
    }
  }

  flush(): RunEvent[] {
    return [];
  }
}

/**
 * Claude Code in print mode with stream-json both ways, so follow-ups reach the live session on stdin. The session
 * ID is the run ID, which makes the session file `$CLAUDE_CONFIG_DIR/projects/<cwd>/<run id>.jsonl`.
 */
export const claudeProfile: CliProfile = {
  name: 'claude',
  // Claude Code's native binary: its package's postinstall puts the platform build at bin/claude.exe.
  command: () => [packageFile('@anthropic-ai/claude-code', 'bin/claude.exe')],
  liveInput: true,
  sessionHoldsCallIds: true,
  files: (setup) =>
    setup.skill ? [skillFile(path.posix.join(configDir(setup), 'skills'), setup.skill)] : [],
  env: (setup) => ({
    ANTHROPIC_BASE_URL: setup.model.baseUrls.anthropic,
    ANTHROPIC_API_KEY: setup.model.token,
    CLAUDE_CONFIG_DIR: configDir(setup),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // A long Bash step stays in the turn: Claude Code would otherwise move it to the background after a few seconds
    // and answer the model without its output, and a run can end while its step still runs (docs/harnesses.md).
    CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    // The run's sandbox is the deliberate sandbox Claude Code asks for before it skips permission prompts as root
    // (only the `none` development backend runs as root; the real ones run as an unprivileged user).
    IS_SANDBOX: '1',
  }),
  args: (setup, _message, session) => [
    '-p',
    '--output-format',
    'stream-json',
    '--input-format',
    'stream-json',
    '--verbose',
    '--permission-mode',
    'bypassPermissions',
    '--model',
    setup.model.model,
    ...(setup.model.reasoningLevel && EFFORTS.has(setup.model.reasoningLevel)
      ? ['--effort', setup.model.reasoningLevel]
      : []),
    ...(setup.mcpServers.length > 0
      ? ['--mcp-config', mcpConfig(setup.mcpServers), '--strict-mcp-config']
      : []),
    ...(session ? ['--resume', setup.runId] : ['--session-id', setup.runId]),
  ],
  stdinLine: (message) =>
    `${JSON.stringify({ type: 'user', message: { role: 'user', content: message } })}\n`,
  sessionGlob: (setup) => path.posix.join(configDir(setup), 'projects', '*', `${setup.runId}.jsonl`),
  // Claude Code files a session under its working directory, every character but letters and digits made `-`.
  restorePath: (setup) =>
    path.posix.join(
      '.claude',
      'projects',
      setup.workspaceDir.replace(/[^A-Za-z0-9]/g, '-'),
      `${setup.runId}.jsonl`,
    ),
  mapper: () => new ClaudeMapper(),
};
