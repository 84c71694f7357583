import http from 'node:http';
import net from 'node:net';
import { lookup } from 'node:dns/promises';
import { unlink } from 'node:fs/promises';
import { isPublicAddress } from '@conveyor/egress-address';
import type { Logger } from '@conveyor/logger';
import type { SandboxPolicy } from './run-sandbox';

/**
 * The only way out of a local sandbox: an HTTP proxy (CONNECT for TLS, absolute-URI requests for plain HTTP)
 * listening on a unix socket bridged into the sandbox. It resolves the name itself, refuses hosts off the allow-list
 * and any address that is not public (`@conveyor/egress-address`, the classifier the orchestrator's egress uses
 * too: loopback, private, link-local with cloud metadata, NAT64, 6to4, Teredo and the other special ranges), then connects
 * to the very address it checked, so a name that resolves differently on a second lookup (DNS rebinding) gains nothing.
 * Hand-written because the general-purpose proxies on npm have no hook between resolution and connection.
 */

/** `example.com` matches itself only; `*.example.com` matches its subdomains, not the apex. */
export function hostMatches(patterns: readonly string[], host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return patterns.some((raw) => {
    const p = raw.toLowerCase();
    return p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p;
  });
}

export interface EgressRules {
  /** Public hosts the run may reach (installation's and environment's lists). */
  allowedHosts: readonly string[];
  /** `host:port` pairs on private networks the operator lets runs reach; exact match only. */
  internalHosts: readonly string[];
}

export type EgressDecision = { allowed: true; address: string } | { allowed: false; reason: string };

/** Decides one destination: the address to connect to, or why not. */
export async function decideEgress(rules: EgressRules, host: string, port: number): Promise<EgressDecision> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (rules.internalHosts.some((entry) => entry.toLowerCase() === `${bare.toLowerCase()}:${port}`)) {
    const [first] = await lookup(bare, { all: true }).catch(() => []);
    return first
      ? { allowed: true, address: first.address }
      : { allowed: false, reason: 'name does not resolve' };
  }
  if (!hostMatches(rules.allowedHosts, bare)) return { allowed: false, reason: 'host not on the allow-list' };
  const addresses = await lookup(bare, { all: true }).catch(() => []);
  if (addresses.length === 0) return { allowed: false, reason: 'name does not resolve' };
  const blocked = addresses.find((a) => !isPublicAddress(a.address));
  if (blocked) return { allowed: false, reason: `resolves to non-public address ${blocked.address}` };
  return { allowed: true, address: addresses[0]!.address };
}

export interface ListenAddress {
  host: string;
  port: number;
}

export type EgressListener = (event: { host: string; port: number; decision: EgressDecision }) => void;

/** Logs denials and tells the policy's listener of every attempt (the executor puts denials on the timeline). */
export function reportEgress(policy: SandboxPolicy, log: Logger): EgressListener {
  return ({ host, port, decision }) => {
    if (!decision.allowed) log.warn({ host, port, reason: decision.reason }, 'sandbox egress denied');
    policy.onEgress?.({
      host,
      port,
      allowed: decision.allowed,
      ...(decision.allowed ? {} : { reason: decision.reason }),
    });
  };
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(authority);
  if (!m) return undefined;
  const port = m[2] ? Number(m[2]) : defaultPort;
  return port > 0 && port < 65536 ? { host: m[1]!, port } : undefined;
}

/**
 * The egress filter's decisions and forwarding for one set of rules, apart from any listener: the local backend's
 * per-run proxy listens with one, and the Kubernetes backend's run gateway (run-gateway.ts) picks one per request by
 * the run's key.
 */
export class EgressFilter {
  constructor(
    private readonly rules: EgressRules,
    private readonly listener: EgressListener,
  ) {}

  private async decide(host: string, port: number): Promise<EgressDecision> {
    const decision = await decideEgress(this.rules, host, port);
    this.listener({ host, port, decision });
    return decision;
  }

  async tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const target = splitHostPort(req.url ?? '', 443);
    const decision = target
      ? await this.decide(target.host, target.port)
      : ({ allowed: false, reason: 'bad CONNECT target' } as const);
    if (!target || !decision.allowed) {
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\negress denied: ${decision.allowed ? '' : decision.reason}\n`,
      );
      return;
    }
    const upstream = net.connect(target.port, decision.address);
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    client.once('close', () => upstream.destroy());
  }

  async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('not http');
    } catch {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('egress proxy: absolute http:// URL or CONNECT required\n');
      return;
    }
    const port = Number(url.port || 80);
    const decision = await this.decide(url.hostname, port);
    if (!decision.allowed) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`egress denied: ${decision.reason}\n`);
      return;
    }
    // The proxy's own credential (a run gateway's run key) is for this hop only: it never reaches the destination.
    const { 'proxy-authorization': _credential, 'proxy-connection': _hop, ...headers } = req.headers;
    const upstream = http.request(
      {
        host: decision.address,
        port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, host: url.host },
      },
      (response) => {
        res.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(res);
      },
    );
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  }
}

export class EgressProxy {
  private readonly server: http.Server;
  private readonly sockets = new Set<net.Socket>();

  private constructor(filter: EgressFilter) {
    this.server = http.createServer((req, res) => void filter.forward(req, res));
    this.server.on(
      'connect',
      (req: http.IncomingMessage, client: net.Socket, head: Buffer) => void filter.tunnel(req, client, head),
    );
    this.server.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** `listenOn`: a unix socket path (the local backend's). */
  static async listen(listenOn: string, rules: EgressRules, listener: EgressListener): Promise<EgressProxy> {
    const proxy = new EgressProxy(new EgressFilter(rules, listener));
    await unlink(listenOn).catch(() => undefined);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(listenOn, resolve);
    });
    return proxy;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
