import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import type { Logger } from '@conveyor/logger';
import { context, inSpan, type Context } from '@conveyor/tracing';
import { HOP_BY_HOP } from '../sandbox/hop-by-hop';
import { RUN_ID_HEADER } from '../sandbox/run-sandbox';
import { forwardedQuery } from './forwarded-query';
import {
  CREDENTIAL_HEADERS,
  isProvider,
  PROTOCOLS,
  type Provider,
  type TokenCounts,
} from './provider-protocols';
import { UsageMeter } from './usage-meter';

/** Request bodies larger than this are refused (a long conversation with images stays well below). */
const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** Model responses pause while the model thinks; only a very long silence ends them. */
const UPSTREAM_IDLE_MS = 10 * 60_000;
export type UpstreamBaseUrls = Record<Provider, string>;

export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

/** One execution's access to its model, registered when the run is claimed and closed when it ends. */
export interface ProxyRunOptions {
  runId: string;
  /** The only protocol this run's key works with. */
  provider: Provider;
  /** The provider key, decrypted for this proxy only. */
  apiKey: string;
  /** Models the run may use (the model as the provider names it). */
  models: string[];
  inputUsdPerMillionTokens: number;
  outputUsdPerMillionTokens: number;
  /** Cost the run may reach, in USD; 0 = no budget. */
  budgetUsd: number;
  /** What earlier executions of the run already spent. */
  spentUsd: number;
  onUsage(usage: ModelUsage): void;
  /** Called once, when a response takes the run past its budget; later requests are refused. */
  onBudgetExceeded(spentUsd: number): void;
  /** The upstream refused the key (401 or 403). */
  onKeyRejected(status: number): void;
  /** A request that is not an inference call was refused: the upstream it would have reached, and why. */
  onRefused(refusal: { host: string; port: number; reason: string }): void;
}

export interface ProxyRegistration {
  /** The per-run token the CLI sends in place of its API key. */
  readonly token: string;
  spentUsd(): number;
  close(): void;
}

interface RunEntry {
  options: ProxyRunOptions;
  digest: Buffer;
  spent: number;
  exceeded: boolean;
  /** The run's trace (the context it was registered in): its agent's requests are spans of it. */
  trace: Context;
}

/** Trace headers an agent sends are not forwarded: the upstream request carries the run's own trace. */
const TRACE_HEADERS = new Set(['traceparent', 'tracestate', 'baggage']);

const digestOf = (token: string): Buffer => createHash('sha256').update(token).digest();

/** Problem in a shape every CLI prints: Anthropic's `error.type`, OpenAI's `error.code`, Gemini's `error.status`. */
function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ type: 'error', error: { type: code, code, status: code, message } }));
}

/**
 * The model proxy (docs/harnesses.md): an HTTP server on loopback that each run's sandbox reaches as its
 * `model-proxy` endpoint. Per request it checks the run's token, enforces the run's provider, models and budget,
 * swaps the token for the real key, forwards to the installation's upstream and streams the answer back unchanged
 * while metering its usage.
 */
export class ModelProxy {
  private readonly runs = new Map<string, RunEntry>();
  private readonly agent = new Agent({ headersTimeout: UPSTREAM_IDLE_MS, bodyTimeout: UPSTREAM_IDLE_MS });
  private server: Server | undefined;

  constructor(
    private readonly upstreams: UpstreamBaseUrls,
    private readonly logger: Logger,
  ) {}

  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    server.listen(port, host);
    await once(server, 'listening');
    return { host, port: (server.address() as AddressInfo).port };
  }

  /** `token`: the one a run's agent already holds (a restarted runner taking the run back); a new one otherwise. */
  register(
    options: ProxyRunOptions,
    token = `cvr_${randomBytes(32).toString('base64url')}`,
  ): ProxyRegistration {
    const digest = digestOf(token);
    const key = digest.toString('hex');
    const entry: RunEntry = {
      options,
      digest,
      spent: options.spentUsd,
      exceeded: options.budgetUsd > 0 && options.spentUsd > options.budgetUsd,
      trace: context.active(),
    };
    this.runs.set(key, entry);
    return { token, spentUsd: () => entry.spent, close: () => this.runs.delete(key) };
  }

  async close(): Promise<void> {
    this.runs.clear();
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    }
    await this.agent.close();
  }

  /** Looked up by the token's digest, then compared in constant time: timing tells nothing about registered tokens. */
  private runFor(presented: string | undefined): RunEntry | undefined {
    if (!presented) return undefined;
    const digest = digestOf(presented);
    const entry = this.runs.get(digest.toString('hex'));
    return entry && timingSafeEqual(entry.digest, digest) ? entry : undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://model-proxy');
    const [, prefix = ''] = url.pathname.split('/');
    if (!isProvider(prefix))
      return refuse(res, 404, 'not_found', 'Unknown path: use /anthropic, /openai or /gemini');
    const provider = prefix;
    const protocol = PROTOCOLS[provider];
    const entry = this.runFor(protocol.presentedKey(req.headers, url.searchParams));
    // Behind the run gateway, the token must be the run's whose key the request came with.
    const keyedRun = req.headers[RUN_ID_HEADER];
    if (!entry || (keyedRun !== undefined && keyedRun !== entry.options.runId))
      return refuse(res, 401, 'authentication_error', 'Invalid run token');
    if (entry.options.provider !== provider)
      return refuse(
        res,
        403,
        'permission_error',
        `This run's credential is for the ${entry.options.provider} API`,
      );
    // The agent is not trusted with the trace: the span is the run's, whatever the request's headers say.
    return inSpan('model request', () => this.forward(req, res, url, entry), {
      parent: entry.trace,
      attributes: { 'conveyor.run_id': entry.options.runId, 'conveyor.provider': provider },
    });
  }

  /** An authenticated run's request: checked against the run's limits, then forwarded upstream and metered. */
  private async forward(req: IncomingMessage, res: ServerResponse, url: URL, entry: RunEntry): Promise<void> {
    const [, , ...rest] = url.pathname.split('/');
    const run = entry.options;
    const provider = run.provider;
    const protocol = PROTOCOLS[provider];
    const log = this.logger.child({ runId: run.runId, provider });
    if (entry.exceeded) return refuse(res, 403, 'budget_exceeded', 'The run has exceeded its budget');
    // Only inference reaches the upstream: the key opens the provider's whole API (files, batches, admin).
    const path = `/${rest.join('/')}`;
    const query = forwardedQuery(protocol, url.searchParams);
    if (req.method !== 'POST' || !protocol.inference.test(path) || 'refused' in query) {
      const reason =
        'refused' in query
          ? `${req.method} ${url.pathname}: ${query.refused}; the model proxy forwards only inference calls`
          : `${req.method} ${url.pathname} is not an inference call; the model proxy forwards only those`;
      log.warn({ method: req.method, path: url.pathname }, 'model proxy refused a non-inference request');
      run.onRefused({ ...hostAndPort(this.upstreams[provider]), reason });
      return refuse(res, 403, 'not_authorized', reason);
    }

    const body = await readBody(req);
    if (body === undefined)
      return refuse(
        res,
        413,
        'request_too_large',
        `Request bodies are limited to ${MAX_REQUEST_BYTES} bytes`,
      );
    const model = protocol.model(path, parseJson(body));
    if (model === undefined || !run.models.includes(model)) {
      return refuse(
        res,
        403,
        'model_not_allowed',
        `Model "${model ?? '(none)'}" is not allowed for this run (allowed: ${run.models.join(', ')})`,
      );
    }

    const upstream = `${this.upstreams[provider].replace(/\/+$/, '')}${path}${query.search}`;
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (
        value === undefined ||
        HOP_BY_HOP.has(name) ||
        CREDENTIAL_HEADERS.includes(name) ||
        TRACE_HEADERS.has(name) ||
        name === RUN_ID_HEADER ||
        name === 'content-length'
      )
        continue;
      headers[name] = value;
    }
    // Identity encoding, so the usage meter reads what streams past; the bytes still reach the CLI unchanged.
    Object.assign(headers, protocol.credentialHeaders(run.apiKey), { 'accept-encoding': 'identity' });

    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      answer = await request(upstream, {
        method: req.method as 'POST',
        headers,
        body: body.length > 0 ? body : undefined,
        signal: abort.signal,
        dispatcher: this.agent,
      });
    } catch (err) {
      log.warn({ err: (err as Error).message, model }, 'model upstream unreachable');
      return refuse(res, 502, 'upstream_unavailable', 'The model provider could not be reached');
    }
    if (answer.statusCode === 401 || answer.statusCode === 403) run.onKeyRejected(answer.statusCode);

    const responseHeaders: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) responseHeaders[name] = value;
    }
    res.writeHead(answer.statusCode, responseHeaders);
    const contentType = String(answer.headers['content-type'] ?? '');
    const meter = new UsageMeter(protocol, contentType);
    try {
      for await (const chunk of answer.body) {
        meter.write(chunk as Buffer);
        if (!res.write(chunk)) await once(res, 'drain');
      }
      res.end();
    } catch (err) {
      log.warn({ err: (err as Error).message, model }, 'model response interrupted');
      res.destroy();
    }
    const usage = meter.finish();
    log.info(
      { model, status: answer.statusCode, inputTokens: usage?.input, outputTokens: usage?.output },
      'model request',
    );
    if (usage) this.account(entry, usage);
  }

  private account(entry: RunEntry, usage: TokenCounts): void {
    const run = entry.options;
    const cost =
      (usage.input * run.inputUsdPerMillionTokens + usage.output * run.outputUsdPerMillionTokens) / 1_000_000;
    entry.spent += cost;
    run.onUsage({ input_tokens: usage.input, output_tokens: usage.output, cost_usd: cost });
    if (run.budgetUsd > 0 && entry.spent > run.budgetUsd && !entry.exceeded) {
      entry.exceeded = true;
      run.onBudgetExceeded(entry.spent);
    }
  }
}

/** Host and port of an upstream base URL, as an `egress_refused` event names them. */
function hostAndPort(base: string): { host: string; port: number } {
  const url = new URL(base);
  return { host: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
}

/** The whole request body, or undefined when it is larger than the proxy accepts. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
