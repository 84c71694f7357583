import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerAnthropic } from './anthropic-messages';
import { answerGemini } from './gemini-generate-content';
import { answerOpenAiResponses } from './openai-responses';
import { SCRIPT_EXHAUSTED_TEXT, type Provider, type RecordedRequest, type ScriptedTurn } from './script';
import { sendJson } from './sse';

export interface ScriptedModelServer {
  /** `http://127.0.0.1:<port>`; each CLI appends its own API path. */
  url: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Adds turns to the end of the script (e.g. for a follow-up). */
  enqueue(...turns: ScriptedTurn[]): void;
  /** Turns not yet served. */
  remaining(): number;
  close(): Promise<void>;
}

/** Gemini CLI asks the model, without tools, whether it should speak next; the user always should. */
const GEMINI_SIDE_ANSWER = JSON.stringify({
  reasoning: 'The model finished its turn.',
  next_speaker: 'user',
});

function providerOf(pathname: string): Provider | 'count_tokens' | undefined {
  if (/:countTokens$/.test(pathname) || pathname.endsWith('/messages/count_tokens')) return 'count_tokens';
  if (pathname.endsWith('/messages')) return 'anthropic';
  if (pathname.endsWith('/responses')) return 'openai';
  if (/:(stream)?[gG]enerateContent$/.test(pathname)) return 'gemini';
  return undefined;
}

function apiKeyOf(req: IncomingMessage, url: URL): string {
  const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  return String(
    req.headers['x-api-key'] ?? req.headers['x-goog-api-key'] ?? bearer ?? url.searchParams.get('key') ?? '',
  );
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  if (!raw) return {};
  try {
    return JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return { raw };
  }
}

function offersTools(body: Record<string, unknown>): boolean {
  return Array.isArray(body.tools) && body.tools.length > 0;
}

/**
 * The one fake the tests allow: a model on a local port speaking the providers' own wire protocols (Anthropic
 * Messages, OpenAI Responses, Gemini generateContent), answering agent turns (requests that offer tools) from a
 * script of turns and the CLIs' side requests (titles, next-speaker checks) with a fixed answer, and recording
 * every request so tests can see what the CLI sent (earlier turns on resume, the credential).
 */
export async function startScriptedModelServer(
  turns: ScriptedTurn[] = [],
  options: {
    /** When set, a request carrying any other key gets 401, as a provider answers a bad key. */
    acceptedKeys?: string[];
    /** Where to listen (default 127.0.0.1, any free port): a cluster's Pods reach the host on its bridge address. */
    host?: string;
    port?: number;
  } = {},
): Promise<ScriptedModelServer> {
  const script = [...turns];
  const requests: RecordedRequest[] = [];
  let counter = 0;
  const nextId = () => String(++counter).padStart(6, '0');

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const receivedAt = Date.now();
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = req.method === 'POST' ? await readJson(req) : {};
    const kind = providerOf(url.pathname);
    const apiKey = apiKeyOf(req, url);
    if (options.acceptedKeys && !options.acceptedKeys.includes(apiKey)) {
      requests.push({
        provider: kind === 'openai' || kind === 'gemini' ? kind : 'anthropic',
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body,
        apiKey,
        scripted: false,
        receivedAt,
      });
      return sendJson(res, 401, {
        type: 'error',
        error: {
          type: 'authentication_error',
          code: 401,
          status: 'UNAUTHENTICATED',
          message: 'invalid API key',
        },
      });
    }
    const scripted = kind !== undefined && kind !== 'count_tokens' && offersTools(body);
    const turn: ScriptedTurn | undefined = scripted
      ? (script.shift() ?? { text: SCRIPT_EXHAUSTED_TEXT })
      : undefined;
    requests.push({
      provider:
        kind === 'count_tokens' || kind === undefined
          ? url.pathname.includes(':')
            ? 'gemini'
            : 'anthropic'
          : kind,
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body,
      apiKey,
      scripted,
      receivedAt,
    });
    switch (kind) {
      case 'count_tokens':
        return sendJson(res, 200, { input_tokens: 100, totalTokens: 100 });
      case 'anthropic':
        return answerAnthropic(res, body, turn ?? { text: 'ok' }, nextId);
      case 'openai':
        return answerOpenAiResponses(res, body, turn ?? { text: 'ok' }, nextId);
      case 'gemini':
        return answerGemini(
          res,
          url.pathname.endsWith(':streamGenerateContent'),
          turn ?? { text: GEMINI_SIDE_ANSWER },
        );
      default:
        return sendJson(res, 404, {
          error: { message: `The scripted model server does not serve ${req.method} ${url.pathname}` },
        });
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err) } });
      else res.end();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    enqueue: (...more) => void script.push(...more),
    remaining: () => script.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
