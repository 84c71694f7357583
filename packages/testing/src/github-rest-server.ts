import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHubRequest {
  method: string;
  path: string;
  authorization: string;
  body: Record<string, unknown>;
}

export interface ScriptedGitHub {
  /** `http://127.0.0.1:<port>`: the GITHUB_API_URL of a GitHub Enterprise Server, as far as the platform knows. */
  url: string;
  requests: GitHubRequest[];
  /** Pull requests opened, by `owner/repo:head`. */
  pulls: Map<string, { number: number; base: string; title: string; draft: boolean; body: string }>;
  /** Comments posted, by `owner/repo#number`. */
  comments: Map<string, string[]>;
  /** The one token accepted (`Authorization: Bearer <token>`); anything else answers 401 "Bad credentials". */
  token: string;
  /** Heads GitHub says already have an open pull request that the token cannot list (POST 422, GET finds none). */
  openElsewhere: (head: string) => boolean;
  /** Replies posted to review comments, by `owner/repo#pull/comment`. */
  replies: Map<string, string[]>;
  /** Installation tokens issued, each with its installation and the repositories (names) it may touch (all: absent). */
  installationTokens: Map<string, { installationId: number; repositories?: string[] }>;
  /** The App's credentials stop working ("revoked"): every JWT is refused as GitHub refuses a deleted App's. */
  appRevoked: boolean;
  /** Check runs by ID: the commit, the details link and every status/conclusion they went through, in order. */
  checkRuns: Map<number, { headSha: string; detailsUrl: string; statuses: string[] }>;
  /**
   * The App whose JWTs GitHub accepts: the `app` option, until one is created from a manifest (which replaces it, with
   * the installations of `manifestInstallations`).
   */
  app?: ScriptedApp;
  /** Apps created from a manifest: the manifest the browser posted, its owner (empty: a user) and what GitHub issued. */
  manifestApps: Array<{
    manifest: Record<string, unknown>;
    organization: string;
    id: string;
    webhookSecret: string;
  }>;
  /** An outage: a request this answers true for gets 503 "Service Unavailable" before anything else is checked. */
  unavailable: (request: GitHubRequest) => boolean;
  close(): Promise<void>;
}

export interface ScriptedGitHubOptions {
  /** The token accepted at first (ScriptedGitHub.token). */
  token: string;
  /** Whether a branch exists on the repository (the real git remote), as GitHub checks `head` and `base`. */
  branchExists: (fullName: string, branch: string) => boolean;
  /** A branch's head commit (GET /repos/{o}/{r}/commits/{branch}). */
  branchHead?: (fullName: string, branch: string) => string | undefined;
  /** A GitHub App: its JWTs are checked against `publicKey` (RS256, `iss` = `id`, at most 10 minutes). */
  app?: ScriptedApp;
  /** The installations an App created from a manifest has (installing it is a step on GitHub after the flow). */
  manifestInstallations?: number[];
}

export interface ScriptedApp {
  id: string;
  slug: string;
  publicKey: KeyObject;
  installations: number[];
}

/** GitHub's checks of an App's JWT: RS256 signed by the App's key, issued by the App, unexpired, ≤ 10 minutes. */
function jwtProblem(jwt: string, app: ScriptedApp): string | undefined {
  const [header = '', claims = '', signature = ''] = jwt.split('.');
  const decode = (part: string): Record<string, unknown> => {
    try {
      return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return {};
    }
  };
  if (decode(header).alg !== 'RS256') return 'A JSON web token could not be decoded';
  const signed = verify(
    'sha256',
    Buffer.from(`${header}.${claims}`),
    app.publicKey,
    Buffer.from(signature, 'base64url'),
  );
  if (!signed) return 'A JSON web token could not be decoded';
  const { iss, iat, exp } = decode(claims) as { iss?: unknown; iat?: unknown; exp?: unknown };
  const now = Math.floor(Date.now() / 1000);
  if (String(iss) !== app.id) return 'Integration not found';
  if (typeof iat !== 'number' || typeof exp !== 'number' || exp <= now || iat > now + 60 || exp - iat > 600)
    return "'Expiration time' claim ('exp') is too far in the future";
  return undefined;
}

/**
 * GitHub's REST API for the calls the platform makes, answering as github.com does (status codes and messages from its
 * documentation): GET /repos/{o}/{r}, POST /repos/{o}/{r}/pulls (422 "A pull request already exists for …" on a
 * second one from the same head, 422 on a missing base), GET /repos/{o}/{r}/pulls?head=…, POST /repos/{o}/{r}/issues/{n}/comments.
 */
export async function startScriptedGitHub(options: ScriptedGitHubOptions): Promise<ScriptedGitHub> {
  const requests: GitHubRequest[] = [];
  const pulls: ScriptedGitHub['pulls'] = new Map();
  const comments: ScriptedGitHub['comments'] = new Map();
  const scripted: ScriptedGitHub = {
    url: '',
    requests,
    pulls,
    comments,
    replies: new Map(),
    installationTokens: new Map(),
    appRevoked: false,
    checkRuns: new Map(),
    ...(options.app ? { app: options.app } : {}),
    manifestApps: [],
    unavailable: () => false,
    token: options.token,
    openElsewhere: () => false,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const send = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const invalid = (res: ServerResponse, errors: unknown[]) =>
    send(res, 422, {
      message: 'Validation Failed',
      errors,
      documentation_url: 'https://docs.github.com/rest',
    });

  /** Manifest codes GitHub issued and not yet converted (each converts once), with what the browser posted. */
  const manifestCodes = new Map<string, { manifest: Record<string, unknown>; organization: string }>();

  /**
   * The page a browser posts a manifest to (`/settings/apps/new` or `/organizations/<org>/settings/apps/new`, form
   * field `manifest`, `?state=`): the user confirms on GitHub, then GitHub sends the browser to the manifest's
   * redirect_url with a code and the state.
   */
  const handleNewApp = (res: ServerResponse, url: URL, organization: string, raw: string) => {
    let manifest: Record<string, unknown>;
    try {
      manifest = JSON.parse(new URLSearchParams(raw).get('manifest') ?? '') as Record<string, unknown>;
    } catch {
      return send(res, 400, { message: 'Invalid manifest' });
    }
    const hook = manifest.hook_attributes as { url?: unknown } | undefined;
    if (typeof manifest.redirect_url !== 'string' || typeof manifest.url !== 'string' || !hook?.url)
      return send(res, 422, {
        message: 'Invalid manifest: url, hook_attributes.url and redirect_url are required',
      });
    const code = randomBytes(10).toString('hex');
    manifestCodes.set(code, { manifest, organization });
    const back = new URL(manifest.redirect_url);
    back.searchParams.set('code', code);
    back.searchParams.set('state', url.searchParams.get('state') ?? '');
    return res.writeHead(302, { location: back.toString() }).end();
  };

  /** POST /app-manifests/{code}/conversions: no authentication, the code once; a fresh RSA key and webhook secret. */
  const convertManifest = (res: ServerResponse, code: string) => {
    const issued = manifestCodes.get(code);
    if (!issued) return send(res, 404, { message: 'Not Found' });
    manifestCodes.delete(code);
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const id = String(5000 + scripted.manifestApps.length);
    const slug = String(issued.manifest.name)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-');
    const webhookSecret = randomBytes(20).toString('hex');
    scripted.app = {
      id,
      slug,
      publicKey: keys.publicKey,
      installations: options.manifestInstallations ?? [],
    };
    scripted.manifestApps.push({ ...issued, id, webhookSecret });
    return send(res, 201, {
      id: Number(id),
      slug,
      name: issued.manifest.name,
      owner: { login: issued.organization || 'octocat' },
      pem: keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      webhook_secret: webhookSecret,
      client_id: `Iv1.${randomBytes(8).toString('hex')}`,
      client_secret: randomBytes(20).toString('hex'),
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    const newApp = /^(?:\/organizations\/([^/]+))?\/settings\/apps\/new$/.exec(path);
    if (req.method === 'POST' && newApp) return handleNewApp(res, url, newApp[1] ?? '', raw);
    const conversion = /^\/app-manifests\/([^/]+)\/conversions$/.exec(path);
    if (req.method === 'POST' && conversion) {
      requests.push({ method: 'POST', path, authorization: req.headers.authorization ?? '', body: {} });
      return convertManifest(res, decodeURIComponent(conversion[1]!));
    }
    let body: Record<string, unknown> = {};
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      return send(res, 400, { message: 'Problems parsing JSON' });
    }
    const authorization = req.headers.authorization ?? '';
    const request = { method: req.method ?? '', path, authorization, body };
    requests.push(request);
    if (scripted.unavailable(request)) return send(res, 503, { message: 'Service Unavailable' });
    const bearer = authorization.startsWith('Bearer ') ? authorization.slice(7) : '';
    if (path === '/app' || path.startsWith('/app/')) return handleApp(req, res, path, bearer, body);
    const installation = scripted.installationTokens.get(bearer);
    if (authorization !== `Bearer ${scripted.token}` && !installation)
      return send(res, 401, { message: 'Bad credentials' });
    const repoPath = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!repoPath) return send(res, 404, { message: 'Not Found' });
    const fullName = `${repoPath[1]}/${repoPath[2]}`;
    if (installation?.repositories && !installation.repositories.includes(repoPath[2]!))
      return send(res, 403, { message: 'Resource not accessible by integration' });
    const rest = repoPath[3] ?? '';
    if (req.method === 'GET' && rest === '')
      return send(res, 200, { full_name: fullName, default_branch: 'main' });
    if (req.method === 'POST' && rest === '/pulls') {
      const head = String(body.head);
      const base = String(body.base);
      if (!options.branchExists(fullName, head))
        return invalid(res, [{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
      if (!options.branchExists(fullName, base))
        return invalid(res, [{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
      const key = `${fullName}:${head}`;
      if (pulls.has(key) || scripted.openElsewhere(head))
        return invalid(res, [
          { resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${key}.` },
        ]);
      const number = pulls.size + 1;
      pulls.set(key, {
        number,
        base,
        title: String(body.title),
        draft: body.draft === true,
        body: String(body.body),
      });
      return send(res, 201, {
        number,
        html_url: `https://github.test/${fullName}/pull/${number}`,
        draft: body.draft,
      });
    }
    if (req.method === 'GET' && rest === '/pulls') {
      // ?head=owner:branch lists the open pull requests from that head (the owner is the repository's here).
      const head = url.searchParams.get('head') ?? '';
      const branch = head.slice(head.indexOf(':') + 1);
      const pull = head.startsWith(`${repoPath[1]}:`) ? pulls.get(`${fullName}:${branch}`) : undefined;
      return send(
        res,
        200,
        pull
          ? [
              {
                number: pull.number,
                html_url: `https://github.test/${fullName}/pull/${pull.number}`,
                head: { ref: branch },
                base: { ref: pull.base },
              },
            ]
          : [],
      );
    }
    const commit = /^\/commits\/([^/]+)$/.exec(rest);
    if (req.method === 'GET' && commit) {
      const sha = options.branchHead?.(fullName, decodeURIComponent(commit[1]!));
      return sha ? send(res, 200, { sha }) : send(res, 404, { message: 'Not Found' });
    }
    if (req.method === 'POST' && rest === '/check-runs') {
      const id = scripted.checkRuns.size + 1;
      scripted.checkRuns.set(id, {
        headSha: String(body.head_sha),
        detailsUrl: String(body.details_url),
        statuses: [String(body.status ?? 'queued')],
      });
      return send(res, 201, { id, head_sha: body.head_sha, status: body.status });
    }
    const check = /^\/check-runs\/(\d+)$/.exec(rest);
    if (req.method === 'PATCH' && check) {
      const run = scripted.checkRuns.get(Number(check[1]));
      if (!run) return send(res, 404, { message: 'Not Found' });
      run.statuses.push(
        body.conclusion ? `${String(body.status)}:${String(body.conclusion)}` : String(body.status),
      );
      return send(res, 200, { id: Number(check[1]), status: body.status });
    }
    const reply = /^\/pulls\/(\d+)\/comments\/(\d+)\/replies$/.exec(rest);
    if (req.method === 'POST' && reply) {
      const key = `${fullName}#${reply[1]}/${reply[2]}`;
      scripted.replies.set(key, [...(scripted.replies.get(key) ?? []), String(body.body)]);
      return send(res, 201, { id: scripted.replies.size, body: body.body });
    }
    const comment = /^\/issues\/(\d+)\/comments$/.exec(rest);
    if (req.method === 'POST' && comment) {
      const key = `${fullName}#${comment[1]}`;
      comments.set(key, [...(comments.get(key) ?? []), String(body.body)]);
      return send(res, 201, { id: comments.size, body: body.body });
    }
    return send(res, 404, { message: 'Not Found' });
  };

  /** GET /app and POST /app/installations/{id}/access_tokens, authenticated with the App's JWT. */
  const handleApp = (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    jwt: string,
    body: Record<string, unknown>,
  ) => {
    const app = scripted.app;
    if (!app) return send(res, 404, { message: 'Not Found' });
    const problem = scripted.appRevoked ? 'Integration not found' : jwtProblem(jwt, app);
    if (problem) return send(res, 401, { message: problem });
    if (req.method === 'GET' && path === '/app')
      return send(res, 200, { id: Number(app.id), slug: app.slug });
    const tokens = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path);
    if (req.method === 'POST' && tokens) {
      const installationId = Number(tokens[1]);
      if (!app.installations.includes(installationId)) return send(res, 404, { message: 'Not Found' });
      const token = `ghs_${randomBytes(18).toString('hex')}`;
      // As GitHub: without `repositories`, the token reaches every repository of the installation.
      const repositories = Array.isArray(body.repositories) ? body.repositories.map(String) : undefined;
      scripted.installationTokens.set(token, { installationId, ...(repositories ? { repositories } : {}) });
      return send(res, 201, { token, expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    }
    return send(res, 404, { message: 'Not Found' });
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(scripted, { url: `http://127.0.0.1:${port}` });
  return scripted;
}
