import type { IncomingHttpHeaders } from 'node:http';

/** The three wire protocols the proxy speaks, one path prefix each (`/anthropic`, `/openai`, `/gemini`). */
export const PROVIDERS = ['anthropic', 'openai', 'gemini'] as const;
export type Provider = (typeof PROVIDERS)[number];

export const isProvider = (value: string): value is Provider =>
  (PROVIDERS as readonly string[]).includes(value);

export interface TokenCounts {
  input: number;
  output: number;
}

/** Where each protocol puts its key, its model and its usage numbers; everything else passes through untouched. */
export interface ProviderProtocol {
  /** The credential the CLI sent, where that CLI puts it. */
  presentedKey(headers: IncomingHttpHeaders, query: URLSearchParams): string | undefined;
  /** Headers carrying the real key to the upstream. */
  credentialHeaders(apiKey: string): Record<string, string>;
  /** The model a request asks for: in the JSON body, or in the path for Gemini. */
  model(path: string, body: unknown): string | undefined;
  /** Usage numbers in one response object (a JSON body or one SSE event); later values replace earlier ones. */
  usage(event: unknown): Partial<TokenCounts>;
  /**
   * The inference calls (all `POST`), as paths below the upstream base: the only requests the proxy forwards. What the
   * pinned CLIs were recorded calling, plus their token counting and OpenAI's Chat Completions for command adapters
   * (docs/harnesses.md, "What the proxy forwards").
   */
  inference: RegExp;
  /**
   * The query parameters those calls carry, each with the values the pinned CLIs send: nothing else reaches the
   * upstream, which gets the real key (docs/harnesses.md, "What the proxy forwards").
   */
  query: Readonly<Record<string, readonly string[]>>;
  /** The query parameter that may carry the run's token instead of a header (read, never forwarded). */
  credentialQuery?: string;
}

/** Headers that may carry a credential: never forwarded as sent. */
export const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'x-goog-api-key'];

const record = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
const sum = (...values: unknown[]): number | undefined => {
  const present = values.map(count).filter((v): v is number => v !== undefined);
  return present.length ? present.reduce((a, b) => a + b, 0) : undefined;
};
const defined = (counts: { input?: number; output?: number }): Partial<TokenCounts> =>
  Object.fromEntries(Object.entries(counts).filter(([, v]) => v !== undefined));

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '');
  return match?.[1]?.trim();
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

const bodyModel = (body: unknown): string | undefined => {
  const model = record(body)?.model;
  return typeof model === 'string' ? model : undefined;
};

/** Anthropic Messages: `message_start` carries input (cache reads and writes included), `message_delta` the output so far. */
const anthropicUsage = (event: unknown): Partial<TokenCounts> => {
  const e = record(event);
  const usage = record(e?.type === 'message_start' ? record(e.message)?.usage : e?.usage);
  if (!usage) return {};
  return defined({
    input: sum(usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens),
    output: count(usage.output_tokens),
  });
};

/** OpenAI Responses (`response.completed` and friends, or a whole response) and Chat Completions (`usage` of the last chunk). */
const openaiUsage = (event: unknown): Partial<TokenCounts> => {
  const e = record(event);
  const usage = record(record(e?.response)?.usage) ?? record(e?.usage);
  if (!usage) return {};
  return defined({
    input: count(usage.input_tokens) ?? count(usage.prompt_tokens),
    output: count(usage.output_tokens) ?? count(usage.completion_tokens),
  });
};

/** Gemini: each chunk's `usageMetadata` holds the totals so far; thinking tokens are billed as output. */
const geminiUsage = (event: unknown): Partial<TokenCounts> => {
  const usage = record(record(event)?.usageMetadata);
  if (!usage) return {};
  return defined({
    input: count(usage.promptTokenCount),
    output: sum(usage.candidatesTokenCount, usage.thoughtsTokenCount),
  });
};

/** Gemini's REST clients may put the key in `?key=`. */
const GEMINI_KEY_QUERY = 'key';

export const PROTOCOLS: Record<Provider, ProviderProtocol> = {
  // Claude Code sends ANTHROPIC_API_KEY as x-api-key and ANTHROPIC_AUTH_TOKEN as a bearer token.
  anthropic: {
    presentedKey: (headers) => header(headers, 'x-api-key') ?? bearer(headers),
    credentialHeaders: (apiKey) => ({ 'x-api-key': apiKey }),
    model: (_path, body) => bodyModel(body),
    usage: anthropicUsage,
    inference: /^\/v1\/messages(?:\/count_tokens)?$/,
    // The SDK's beta client marks every call `?beta=true`.
    query: { beta: ['true'] },
  },
  openai: {
    presentedKey: (headers) => bearer(headers),
    credentialHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
    model: (_path, body) => bodyModel(body),
    usage: openaiUsage,
    // The upstream base carries `/v1`.
    inference: /^\/(?:responses|chat\/completions)$/,
    query: {},
  },
  // The Gemini CLI sends x-goog-api-key; REST clients often use `?key=`.
  gemini: {
    presentedKey: (headers, query) =>
      header(headers, 'x-goog-api-key') ?? query.get(GEMINI_KEY_QUERY) ?? bearer(headers),
    credentialHeaders: (apiKey) => ({ 'x-goog-api-key': apiKey }),
    model: (path) => /\/models\/([^/:]+)(?::|$)/.exec(path)?.[1],
    usage: geminiUsage,
    inference: /^\/v1beta\/models\/[^/:]+:(?:generateContent|streamGenerateContent|countTokens)$/,
    // Streaming as server-sent events.
    query: { alt: ['sse'] },
    credentialQuery: GEMINI_KEY_QUERY,
  },
};
