import type { IncomingHttpHeaders } from 'node:http';

/**
 * A tool call the scripted model makes, with the CLI's own tool name. `input` is the JSON arguments; a string is a
 * free-form ("custom") tool input, as Codex's apply_patch takes.
 */
export interface ScriptedToolCall {
  name: string;
  input: Record<string, unknown> | string;
}

/** One model response: some text, tool calls, or both (the text first). A turn with tool calls ends with `tool_use`. */
export interface ScriptedTurn {
  text?: string;
  toolCalls?: ScriptedToolCall[];
}

export type Provider = 'anthropic' | 'openai' | 'gemini';

export interface RecordedRequest {
  provider: Provider;
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** The credential the client sent, whichever header its provider uses. */
  apiKey: string;
  /** True when this request took the next scripted turn (an agent turn offering tools). */
  scripted: boolean;
  /** When its headers arrived (epoch ms): benchmarks time the first model request of a run by it. */
  receivedAt: number;
}

/** Token counts every response reports, so tests can assert metering. */
export const SCRIPTED_USAGE = { inputTokens: 120, outputTokens: 30 } as const;

/** What the server answers once the script is used up. */
export const SCRIPT_EXHAUSTED_TEXT = 'The script has no more turns.';
