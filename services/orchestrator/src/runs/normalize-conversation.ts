/**
 * The normalized conversation (GET /agent/runs/{id}/conversation, GET /agent/conversations/{id}): messages
 * alternate between the user (prompt, follow-ups) and the agent; an agent message groups the steps of one
 * turn in order: text, tool calls (each paired with its result by call_id) and notable events (artifacts,
 * logs). The shape is documented in docs/runs.md.
 */
export interface Conversation {
  conversation_id: string;
  /** The conversation's latest run; `run_ids` lists every run that continued it, oldest first. */
  run_id: string;
  run_ids: string[];
  messages: ConversationMessage[];
}

export interface ConversationMessage {
  id: string;
  role: 'user' | 'agent';
  run_id: string;
  execution: number;
  created_at: string;
  /** User messages only: the run's prompt or a follow-up. */
  source?: 'prompt' | 'followup';
  steps: ConversationStep[];
}

export type ConversationStep = TextStep | ToolCallStep | EventStep;

export interface TextStep {
  id: string;
  type: 'text';
  created_at: string;
  text: string;
  truncated?: true;
}

export interface ToolCallStep {
  id: string;
  type: 'tool_call';
  created_at: string;
  call_id: string;
  /** null when the result arrived without its call. */
  name: string | null;
  input: unknown;
  status: 'pending' | 'completed' | 'failed';
  output?: unknown;
  completed_at?: string;
  truncated?: true;
}

export interface EventStep {
  id: string;
  type: 'event';
  created_at: string;
  kind: 'artifact' | 'log';
  data: Record<string, unknown>;
}

/** One stored RunEvent, as read from the database. */
export interface StoredEvent {
  id: bigint | number | string;
  runId: string;
  execution: number;
  kind: string;
  data: unknown;
  createdAt: Date;
}

/** Texts and tool payloads above this many characters are cut (the raw transcript keeps everything). */
export const MAX_STEP_CHARS = 64 * 1024;

function clipText(text: string): { text: string; truncated?: true } {
  return text.length > MAX_STEP_CHARS ? { text: text.slice(0, MAX_STEP_CHARS), truncated: true } : { text };
}

/** A JSON payload, or its serialization cut to the limit when it is larger. */
function clipJson(value: unknown): { value: unknown; truncated: boolean } {
  if (value === undefined) return { value: null, truncated: false };
  const json = typeof value === 'string' ? value : JSON.stringify(value);
  if (json === undefined || json.length <= MAX_STEP_CHARS) return { value, truncated: false };
  return { value: json.slice(0, MAX_STEP_CHARS), truncated: true };
}

const asRecord = (data: unknown): Record<string, unknown> =>
  data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

/**
 * Pure: events (any order of runs, sorted here by ID, which is insertion order) → messages. Kinds that belong
 * to the timeline (state changes, setup steps, follow-up routing), usage and debug logs are left out.
 */
export function normalizeConversation(
  conversationId: string,
  runIds: string[],
  events: StoredEvent[],
): Conversation {
  const sorted = [...events].sort((a, b) =>
    BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0,
  );
  const messages: ConversationMessage[] = [];
  const calls = new Map<string, ToolCallStep>();
  let current: ConversationMessage | undefined;

  const agentMessage = (e: StoredEvent, at: string): ConversationMessage => {
    if (
      current &&
      current.role === 'agent' &&
      current.run_id === e.runId &&
      current.execution === e.execution
    )
      return current;
    current = {
      id: String(e.id),
      role: 'agent',
      run_id: e.runId,
      execution: e.execution,
      created_at: at,
      steps: [],
    };
    messages.push(current);
    return current;
  };

  for (const e of sorted) {
    const data = asRecord(e.data);
    const at = e.createdAt.toISOString();
    const id = String(e.id);
    const callKey = (callId: string) => `${e.runId}:${e.execution}:${callId}`;
    switch (e.kind) {
      case 'user_message': {
        current = {
          id,
          role: 'user',
          run_id: e.runId,
          execution: e.execution,
          created_at: at,
          source: data.source === 'followup' ? 'followup' : 'prompt',
          steps: [{ id, type: 'text', created_at: at, ...clipText(str(data.text)) }],
        };
        messages.push(current);
        break;
      }
      case 'agent_message':
        agentMessage(e, at).steps.push({ id, type: 'text', created_at: at, ...clipText(str(data.text)) });
        break;
      case 'tool_call': {
        const input = clipJson(data.input);
        const step: ToolCallStep = {
          id,
          type: 'tool_call',
          created_at: at,
          call_id: str(data.call_id),
          name: str(data.name),
          input: input.value,
          status: 'pending',
        };
        if (input.truncated) step.truncated = true;
        calls.set(callKey(step.call_id), step);
        agentMessage(e, at).steps.push(step);
        break;
      }
      case 'tool_result': {
        const callId = str(data.call_id);
        let step = calls.get(callKey(callId));
        if (!step || step.status !== 'pending') {
          // A result without its call (or a second result): shown on its own rather than dropped.
          step = {
            id,
            type: 'tool_call',
            created_at: at,
            call_id: callId,
            name: null,
            input: null,
            status: 'pending',
          };
          agentMessage(e, at).steps.push(step);
        }
        const output = clipJson(data.output);
        step.output = output.value;
        step.status = data.is_error === true ? 'failed' : 'completed';
        step.completed_at = at;
        if (output.truncated) step.truncated = true;
        break;
      }
      case 'artifact':
        agentMessage(e, at).steps.push({
          id,
          type: 'event',
          created_at: at,
          kind: 'artifact',
          data: { artifact_type: data.artifact_type, data: asRecord(data.data) },
        });
        break;
      case 'log':
        if (data.level !== 'debug') {
          agentMessage(e, at).steps.push({
            id,
            type: 'event',
            created_at: at,
            kind: 'log',
            data: { level: data.level, ...clipText(str(data.text)) },
          });
        }
        break;
      default:
        break; // timeline kinds and usage
    }
  }
  return {
    conversation_id: conversationId,
    run_id: runIds[runIds.length - 1] ?? '',
    run_ids: runIds,
    messages,
  };
}
