import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { AppError, PROBLEM_CONTENT_TYPE, toProblem } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { EgressFilter } from '../egress-proxy';
import { endpointForwarding, type EndpointForwarding } from '../route-forwarder';
import { RUN_ID_HEADER, type SandboxEndpoint } from '../run-sandbox';
import type { RunRoutes } from './run-routes';

/** Set on a request one gateway passes to another: the receiver serves it from its own runs or refuses it. */
const HOP_HEADER = 'x-conveyor-gateway-hop';
/** Path prefix of a run's endpoints: `/r/<run key>/<endpoint name>/<path>`. */
const ENDPOINT_PREFIX = '/r/';

/** What one run may use through the gateway: its egress filter and its endpoints. */
export interface GatewayRun {
  runId: string;
  egress: EgressFilter;
  endpoints: readonly SandboxEndpoint[];
}

export interface GatewayRegistration {
  /** The run's key: the Pod presents it as its proxy credential and in its endpoints' paths. */
  readonly key: string;
  close(): Promise<void>;
  /**
   * Stops serving the run here and renewing its route, and leaves the route alone: another replica took the run
   * over (under the same key) while this one lives, and the route names the adopter now.
   */
  forget(): void;
}

interface LocalRun {
  runId: string;
  digest: Buffer;
  egress: EgressFilter;
  endpoints: Map<string, EndpointForwarding>;
}

const digestOf = (key: string): Buffer => createHash('sha256').update(key).digest();

/** The key of a `Proxy-Authorization: Basic base64(user:key)`; the user name is not read. */
function proxyKey(req: http.IncomingMessage): string | undefined {
  const [scheme, encoded] = (req.headers['proxy-authorization'] ?? '').split(' ');
  if (scheme?.toLowerCase() !== 'basic' || !encoded) return undefined;
  const pair = Buffer.from(encoded, 'base64').toString();
  const colon = pair.indexOf(':');
  return colon < 0 ? undefined : pair.slice(colon + 1) || undefined;
}

function refuse(res: http.ServerResponse, error: AppError, instance: string): void {
  res.writeHead(error.httpStatus, { 'content-type': PROBLEM_CONTENT_TYPE });
  res.end(JSON.stringify(toProblem(error, instance)));
}

const PROXY_REFUSALS = {
  missing: 'HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="conveyor-run"',
  unavailable: 'HTTP/1.1 503 Service Unavailable',
} as const;

function refuseProxy(client: net.Socket, why: keyof typeof PROXY_REFUSALS, text: string): void {
  client.end(`${PROXY_REFUSALS[why]}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${text}\n`);
}

/**
 * Every runner replica's one address for run Pods on Kubernetes (docs/sandbox.md "Kubernetes"): a Service selects
 * the runner Pods on this port, so a run's Pod reaches its egress filter and endpoints whichever replica answers —
 * and still after the replica that started it is gone. Each request names its run by the run's key (the proxy
 * credential, or the endpoint path), never by its source address; a replica that does not hold the run passes the
 * request on to the one that does (`RunRoutes`, in Redis), so the run's grants stay in one process. A request
 * without a key, or with one no replica holds, reaches nothing. Hand-written: no proxy on npm picks its upstream
 * by a credential it also checks.
 */
export class RunGateway {
  private readonly runs = new Map<string, LocalRun>();
  private readonly sockets = new Set<net.Socket>();
  private readonly agent = new http.Agent({ keepAlive: true });
  private readonly renewal: NodeJS.Timeout;

  private constructor(
    private readonly server: http.Server,
    private readonly routes: RunRoutes,
    renewMs: number,
    private readonly logger: Logger,
  ) {
    server.on(
      'request',
      (req: http.IncomingMessage, res: http.ServerResponse) => void this.request(req, res),
    );
    server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      void this.connect(req, client, head);
    });
    server.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.renewal = setInterval(() => {
      this.renew().catch((err: unknown) => {
        this.logger.warn({ err: (err as Error).message }, 'run gateway could not renew its runs');
      });
    }, renewMs);
    this.renewal.unref();
  }

  static async listen(
    address: { host: string; port: number },
    routes: RunRoutes,
    renewMs: number,
    logger: Logger,
  ): Promise<RunGateway> {
    const server = http.createServer();
    server.listen(address.port, address.host);
    await once(server, 'listening');
    return new RunGateway(server, routes, renewMs, logger);
  }

  /** Renews the routes of the runs served here (every `renewMs`), never one another replica has taken over. */
  renew(): Promise<void> {
    return this.routes.renew([...this.runs.keys()]);
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /**
   * Serves the run here and names this replica its holder; `close` ends both. `key`: the key its Pod already holds,
   * when this replica adopts a run another one registered (the route in Redis then names this one).
   */
  async register(
    run: GatewayRun,
    key = `cvk_${randomBytes(32).toString('base64url')}`,
  ): Promise<GatewayRegistration> {
    const digest = digestOf(key);
    const hex = digest.toString('hex');
    this.runs.set(hex, {
      runId: run.runId,
      digest,
      egress: run.egress,
      endpoints: new Map(
        run.endpoints.map((e) => [e.name, endpointForwarding(e.target, e.routes, this.agent)]),
      ),
    });
    try {
      await this.routes.hold([hex]);
    } catch (err) {
      this.runs.delete(hex);
      throw err;
    }
    return {
      key,
      close: async () => {
        this.runs.delete(hex);
        await this.routes.drop(hex);
      },
      forget: () => void this.runs.delete(hex),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.renewal);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.agent.destroy();
  }

  /** The run of this key when this replica holds it; compared in constant time after the lookup by digest. */
  private local(key: string): LocalRun | undefined {
    const digest = digestOf(key);
    const run = this.runs.get(digest.toString('hex'));
    return run && timingSafeEqual(run.digest, digest) ? run : undefined;
  }

  /**
   * Where a key not held here is served: another replica's gateway, or `unavailable` when the lookup itself failed
   * (the agent may retry), or undefined when no replica holds it. A request already passed on once is not passed on
   * again: its holder's entry was stale.
   */
  private async elsewhere(
    req: http.IncomingMessage,
    key: string,
  ): Promise<string | 'unavailable' | undefined> {
    if (req.headers[HOP_HEADER] !== undefined) return undefined;
    try {
      return await this.routes.holder(digestOf(key).toString('hex'));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'run gateway could not look a run up');
      return 'unavailable';
    }
  }

  private async connect(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const key = proxyKey(req);
    if (!key) return refuseProxy(client, 'missing', 'a run key is required');
    const run = this.local(key);
    if (run) return run.egress.tunnel(req, client, head);
    const holder = await this.elsewhere(req, key);
    if (holder === 'unavailable') return refuseProxy(client, 'unavailable', 'try again');
    if (!holder) return refuseProxy(client, 'missing', 'no run has this key');
    const [host, port] = splitHolder(holder);
    const upstream = net.connect(port, host, () => {
      upstream.write(
        `CONNECT ${req.url} HTTP/1.1\r\nhost: ${req.url}\r\nproxy-authorization: ${req.headers['proxy-authorization']}\r\n${HOP_HEADER}: 1\r\n\r\n`,
      );
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    client.once('close', () => upstream.destroy());
  }

  private async request(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    // An absolute URI is a plain-HTTP request through the egress filter; a path is one of a run's endpoints.
    const proxied = !target.startsWith('/');
    const endpoint = proxied ? undefined : parseEndpointPath(target);
    const key = proxied ? proxyKey(req) : endpoint?.key;
    if (!key) {
      req.resume();
      if (proxied)
        res
          .writeHead(407, { 'proxy-authenticate': 'Basic realm="conveyor-run"' })
          .end('a run key is required\n');
      else refuse(res, new AppError('authentication_required', 'A run key is required'), '/');
      return;
    }
    const run = this.local(key);
    if (run) {
      if (proxied) return run.egress.forward(req, res);
      const forward = run.endpoints.get(endpoint!.name);
      if (!forward) {
        req.resume();
        return refuse(res, new AppError('resource_not_found', 'The run has no such endpoint'), '/');
      }
      return forward(req, res, endpoint!.path, { [RUN_ID_HEADER]: run.runId });
    }
    const holder = await this.elsewhere(req, key);
    if (!holder || holder === 'unavailable') {
      req.resume();
      return holder
        ? refuse(res, new AppError('resource_unavailable', 'The run cannot be reached now; try again'), '/')
        : refuse(res, new AppError('authentication_required', 'No run has this key'), '/');
    }
    const [host, port] = splitHolder(holder);
    const upstream = http.request(
      {
        host,
        port,
        method: req.method,
        path: target,
        headers: { ...req.headers, [HOP_HEADER]: '1' },
        agent: this.agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (res.headersSent) res.destroy();
      else refuse(res, new AppError('resource_unavailable', 'The run cannot be reached now; try again'), '/');
    });
    req.pipe(upstream);
  }
}

/** `/r/<key>/<name>/<rest>` → the key, the endpoint's name and `/<rest>` (with the query). */
function parseEndpointPath(target: string): { key: string; name: string; path: string } | undefined {
  if (!target.startsWith(ENDPOINT_PREFIX)) return undefined;
  const [key, name, ...rest] = target.slice(ENDPOINT_PREFIX.length).split('/');
  return key && name ? { key, name, path: `/${rest.join('/')}` } : undefined;
}

function splitHolder(holder: string): [string, number] {
  const colon = holder.lastIndexOf(':');
  return [holder.slice(0, colon), Number(holder.slice(colon + 1))];
}

/** The proxy URL and endpoint URLs a run's Pod is given for its key, at the gateway's Service address. */
export function gatewayUrls(address: string, key: string) {
  return {
    key,
    proxy: `http://run:${key}@${address}`,
    endpoint: (name: string) => `http://${address}${ENDPOINT_PREFIX}${key}/${name}`,
  };
}
