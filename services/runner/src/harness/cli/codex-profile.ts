import path from 'node:path';
import { stringify } from 'smol-toml';
import type { RunEvent } from '@conveyor/run-events';
import type { CliEventMapper, CliProfile, CliSetup, TurnEnd } from './cli-profile';
import { keptEvent, skillFile } from './cli-events';
import { packageFile } from './installed-package';

/** Effort levels Codex's `model_reasoning_effort` accepts. */
const EFFORTS = new Set(['minimal', 'low', 'medium', 'high', 'xhigh']);
/** The variable Codex reads the provider's API key from (our per-run token, never a real key). */
const TOKEN_VARIABLE = 'CONVEYOR_MODEL_TOKEN';

const codexHome = (setup: CliSetup) => path.posix.join(setup.home, '.codex');

/** `$CODEX_HOME/config.toml`: the model proxy as the only provider, the run's MCP servers, no update checks. */
function configToml(setup: CliSetup): string {
  const effort =
    setup.model.reasoningLevel && EFFORTS.has(setup.model.reasoningLevel)
      ? { model_reasoning_effort: setup.model.reasoningLevel }
      : {};
  return stringify({
    model: setup.model.model,
    model_provider: 'conveyor',
    ...effort,
    check_for_update_on_startup: false,
    analytics: { enabled: false },
    model_providers: {
      conveyor: {
        name: 'Conveyor model proxy',
        base_url: setup.model.baseUrls.openai,
        env_key: TOKEN_VARIABLE,
        wire_api: 'responses',
      },
    },
    mcp_servers: Object.fromEntries(
      setup.mcpServers.map((s) => [
        s.name,
        s.transport === 'stdio'
          ? { command: s.command, args: s.args, env: s.env }
          : { url: s.url, http_headers: s.headers },
      ]),
    ),
  });
}

type Usage = { input_tokens?: number; cached_input_tokens?: number; output_tokens?: number };

/** The thread's token totals so far, from the last `token_count` of a rollout file (Codex reports totals, not turns). */
function totalsOf(rollout: string): { input: number; output: number } {
  const lines = rollout.split('\n').filter((l) => l.includes('"token_count"'));
  for (const line of lines.reverse()) {
    try {
      const total = (JSON.parse(line) as { payload?: { info?: { total_token_usage?: Usage } } }).payload?.info
        ?.total_token_usage;
      if (total) return { input: total.input_tokens ?? 0, output: total.output_tokens ?? 0 };
    } catch {
      // a torn last line: look further back
    }
  }
  return { input: 0, output: 0 };
}

/** `…/rollout-2026-11-23T22-46-15-<thread id>.jsonl` → the thread ID. */
const threadOf = (rollout: string) =>
  /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i.exec(rollout)?.[1] ?? '--last';

type Item = Record<string, unknown> & { id?: string; type?: string };

/** `codex exec --json`: thread/turn events and items (messages, commands, file changes, MCP calls). */
class CodexMapper implements CliEventMapper {
  private readonly started = new Set<string>();
  private lastMessage = '';
  private totals: { input: number; output: number };

  constructor(
    private readonly processIndex: number,
    previousSession: string,
  ) {
    this.totals = totalsOf(previousSession);
  }

  map(event: Record<string, unknown>): { events: RunEvent[]; turnEnd?: TurnEnd } {
    const item = (event.item ?? {}) as Item;
    switch (event.type) {
      case 'thread.started':
      case 'turn.started':
        return { events: [] };
      case 'item.started':
        return { events: this.call(item) };
      case 'item.completed':
        return { events: this.completed(item) };
      case 'item.updated':
        return { events: item.type === 'todo_list' ? [keptEvent('codex', event)] : [] };
      case 'turn.completed': {
        const usage = (event.usage ?? {}) as Usage;
        const now = { input: usage.input_tokens ?? 0, output: usage.output_tokens ?? 0 };
        const delta = {
          input: Math.max(0, now.input - this.totals.input),
          output: Math.max(0, now.output - this.totals.output),
        };
        this.totals = now;
        return {
          events: [{ kind: 'usage', input_tokens: delta.input, output_tokens: delta.output }],
          turnEnd: { ok: true, message: this.lastMessage },
        };
      }
      case 'turn.failed': {
        const error = (event.error ?? {}) as { message?: string };
        return {
          events: [],
          turnEnd: { ok: false, message: error.message ?? 'Codex reported a failed turn' },
        };
      }
      case 'error':
        return {
          events: [
            { kind: 'log', level: 'error', text: `codex: ${String(event.message ?? JSON.stringify(event))}` },
          ],
        };
      default:
        return { events: [keptEvent('codex', event)] };
    }
  }

  flush(): RunEvent[] {
    return [];
  }

  /** Item IDs restart with every process; a follow-up's process must not pair with an earlier one's calls. */
  private callId(item: Item): string {
    return `${this.processIndex}.${String(item.id)}`;
  }

  private call(item: Item): RunEvent[] {
    const call = (name: string, input: unknown): RunEvent[] => {
      this.started.add(String(item.id));
      return [{ kind: 'tool_call', call_id: this.callId(item), name, input }];
    };
    switch (item.type) {
      case 'command_execution':
        return call('shell', { command: item.command });
      case 'file_change':
        return call('apply_patch', { changes: item.changes });
      case 'mcp_tool_call':
        return call(`${String(item.server)}.${String(item.tool)}`, item.arguments ?? {});
      case 'web_search':
        return call('web_search', { query: item.query });
      default:
        return [];
    }
  }

  private completed(item: Item): RunEvent[] {
    switch (item.type) {
      case 'agent_message':
        this.lastMessage = String(item.text ?? '');
        return [{ kind: 'agent_message', text: this.lastMessage }];
      case 'command_execution':
      case 'file_change':
      case 'mcp_tool_call':
      case 'web_search': {
        const call = this.started.has(String(item.id)) ? [] : this.call(item);
        const failed =
          item.status === 'failed' || (typeof item.exit_code === 'number' && item.exit_code !== 0);
        const output =
          item.type === 'command_execution'
            ? { output: item.aggregated_output, exit_code: item.exit_code }
            : item.type === 'mcp_tool_call'
              ? (item.result ?? item.error ?? null)
              : { status: item.status };
        return [
          ...call,
          { kind: 'tool_result', call_id: this.callId(item), output, ...(failed ? { is_error: true } : {}) },
        ];
      }
      case 'error':
        return [{ kind: 'log', level: 'warn', text: `codex: ${String(item.message ?? '')}` }];
      default:
        return [keptEvent('codex', { type: `item.${String(item.type)}`, ...item })];
    }
  }
}

/**
 * Codex CLI: `codex exec --json` per turn; a follow-up is `codex exec resume <thread>`, the thread named by its rollout
 * file (the session file). Codex finds a restored rollout file by its thread ID in a fresh CODEX_HOME; `--last` would
 * only look in its state database, which a restored session does not carry.
 */
export const codexProfile: CliProfile = {
  name: 'codex',
  // The Node entry point under this Node; Codex's launcher picks its platform binary from an optional dependency.
  command: () => [process.execPath, packageFile('@openai/codex', 'bin/codex.js')],
  liveInput: false,
  files: (setup) => [
    { path: path.posix.join(codexHome(setup), 'config.toml'), content: configToml(setup) },
    ...(setup.skill ? [skillFile(path.posix.join(codexHome(setup), 'skills'), setup.skill)] : []),
  ],
  env: (setup) => ({ CODEX_HOME: codexHome(setup), [TOKEN_VARIABLE]: setup.model.token }),
  args: (_setup, message, session) => [
    'exec',
    '--json',
    '--skip-git-repo-check',
    // Our sandbox is the isolation; Codex's own would need privileges the sandbox does not give it.
    '--dangerously-bypass-approvals-and-sandbox',
    ...(session ? ['resume', threadOf(session)] : []),
    '--',
    message,
  ],
  sessionGlob: (setup) => path.posix.join(codexHome(setup), 'sessions', '*', '*', '*', 'rollout-*.jsonl'),
  mapper: ({ processIndex, previousSession }) => new CodexMapper(processIndex, previousSession),
};
