/**
 * The run view's model, folded from the run's event log as it streams in (GET …/events, docs/console.md). The
 * same grouping as the API's conversation (docs/runs.md): a user message (prompt or follow-up) starts a turn,
 * everything the agent does until the next one belongs to one agent message; tool results join their call.
 */
import { TIMELINE_KINDS } from '@conveyor/run-events';

export interface StreamedEvent {
  sequence: number;
  kind: string;
  created_at: string;
  execution: number;
  data: Record<string, unknown>;
}

export type Step =
  | { type: 'text'; sequence: number; text: string }
  | {
      type: 'tool';
      sequence: number;
      callId: string;
      name: string;
      input: unknown;
      output?: unknown;
      status: 'pending' | 'completed' | 'failed';
    }
  | { type: 'event'; sequence: number; kind: string; data: Record<string, unknown> };

export interface Message {
  sequence: number;
  role: 'user' | 'agent';
  source?: string;
  createdAt: string;
  execution: number;
  steps: Step[];
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export class RunLog {
  /** The highest sequence applied; events at or below it are repeats and ignored. */
  lastSequence = 0;
  received = 0;
  readonly timeline: StreamedEvent[] = [];
  readonly messages: Message[] = [];
  readonly usage: Usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  private readonly toolSteps = new Map<string, Extract<Step, { type: 'tool' }>>();

  /** Applies one event; false when it was already applied (a repeat after a reconnect). */
  apply(e: StreamedEvent): boolean {
    if (e.sequence <= this.lastSequence) return false;
    this.lastSequence = e.sequence;
    this.received += 1;
    const d = e.data;
    if ((TIMELINE_KINDS as ReadonlySet<string>).has(e.kind)) {
      this.timeline.push(e);
      return true;
    }
    switch (e.kind) {
      case 'user_message':
        this.messages.push({
          sequence: e.sequence,
          role: 'user',
          source: String(d.source ?? 'prompt'),
          createdAt: e.created_at,
          execution: e.execution,
          steps: [{ type: 'text', sequence: e.sequence, text: String(d.text ?? '') }],
        });
        break;
      case 'agent_message':
        this.agentTurn(e).steps.push({ type: 'text', sequence: e.sequence, text: String(d.text ?? '') });
        break;
      case 'tool_call': {
        const step = {
          type: 'tool' as const,
          sequence: e.sequence,
          callId: String(d.call_id),
          name: String(d.name ?? ''),
          input: d.input,
          status: 'pending' as const,
        };
        this.toolSteps.set(step.callId, step);
        this.agentTurn(e).steps.push(step);
        break;
      }
      case 'tool_result': {
        const callId = String(d.call_id);
        let step = this.toolSteps.get(callId);
        if (!step) {
          step = {
            type: 'tool',
            sequence: e.sequence,
            callId,
            name: '(unknown tool)',
            input: null,
            status: 'pending',
          };
          this.agentTurn(e).steps.push(step);
        }
        step.output = d.output;
        step.status = d.is_error ? 'failed' : 'completed';
        break;
      }
      case 'usage':
        this.usage.inputTokens += Number(d.input_tokens ?? 0);
        this.usage.outputTokens += Number(d.output_tokens ?? 0);
        this.usage.costUsd += Number(d.cost_usd ?? 0);
        break;
      default:
        this.agentTurn(e).steps.push({ type: 'event', sequence: e.sequence, kind: e.kind, data: d });
    }
    return true;
  }

  private agentTurn(e: StreamedEvent): Message {
    const last = this.messages[this.messages.length - 1];
    if (last?.role === 'agent' && last.execution === e.execution) return last;
    const turn: Message = {
      sequence: e.sequence,
      role: 'agent',
      createdAt: e.created_at,
      execution: e.execution,
      steps: [],
    };
    this.messages.push(turn);
    return turn;
  }
}
