import { spawn, execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface GitHttpServer {
  /** `http://<host>:<port>`; repositories are `<url>/<name>.git` under the served root. */
  url: string;
  /** Every request, with the credential it carried (the decoded `Authorization: Basic` user:password, or ''). */
  requests: Array<{ method: string; path: string; service: string; credential: string }>;
  close(): Promise<void>;
}

export interface GitHttpOptions {
  /** Fetching needs the credential too, like a forge's private repository: an anonymous clone gets 401. */
  private?: boolean;
  /** Called when a fetch (git-upload-pack) has been served: a test moves a branch between a run's clone and push. */
  afterFetch?: () => void;
}

/**
 * A real git server on loopback: git's own smart-HTTP CGI (`git http-backend`) behind a small Node bridge. Fetching is
 * open unless `options.private`; pushing (git-receive-pack) needs HTTP Basic `credential` (`user:password`, or a check
 * of what was sent), like a forge with a push token.
 * `host`: another loopback address (127.0.0.2) for a bubblewrap sandbox's git, which reaches 127.0.0.1 and localhost
 * directly (NO_PROXY: its own loopback, where nothing serves git) and anything else through the egress proxy.
 */
export async function startGitHttpServer(
  root: string,
  credential: string | ((sent: string) => boolean),
  host = '127.0.0.1',
  options: GitHttpOptions = {},
): Promise<GitHttpServer> {
  const backend = path.join(
    execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim(),
    'git-http-backend',
  );
  const requests: GitHttpServer['requests'] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const service = url.searchParams.get('service') ?? path.posix.basename(url.pathname);
    const header = req.headers.authorization ?? '';
    const sent = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : '';
    requests.push({ method: req.method ?? '', path: url.pathname, service, credential: sent });
    const push = service === 'git-receive-pack';
    const allowed = typeof credential === 'string' ? sent === credential : credential(sent);
    if ((push || options.private) && !allowed) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end('this needs a credential\n');
      return;
    }
    const fetchPack = req.method === 'POST' && service === 'git-upload-pack';
    const cgi = spawn(backend, [], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-encoding']
          ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] }
          : {}),
        REMOTE_ADDR: '127.0.0.1',
        ...(push ? { REMOTE_USER: sent.split(':')[0] ?? 'git' } : {}),
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (started) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      started = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => {
      if (started) res.end();
      else res.writeHead(500).end(head);
      if (fetchPack) options.afterFetch?.();
    });
  };
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
