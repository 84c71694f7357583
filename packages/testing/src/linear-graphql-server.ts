import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LinearCall {
  /** The operation, as the platform names it (`viewer`, `commentCreate`, `issueUpdate`, or `unknown`). */
  operation: string;
  authorization: string;
  variables: Record<string, unknown>;
}

export interface ScriptedLinear {
  /** `http://127.0.0.1:<port>/graphql`: the platform's LINEAR_API_URL. */
  url: string;
  calls: LinearCall[];
  /** Comments created, by issue ID. */
  comments: Map<string, string[]>;
  /** Workflow states each issue was moved to, in order, by issue ID. */
  states: Map<string, string[]>;
  /** The key stops working (revoked in Linear's settings): every call is refused as Linear refuses it. */
  revoked: boolean;
  /** The next this many calls answer 503 (an outage). */
  unavailable: number;
  close(): Promise<void>;
}

export interface ScriptedLinearOptions {
  /** The personal API key accepted, sent as it is (`Authorization: <key>`). */
  apiKey: string;
  /** An OAuth access token accepted, sent as `Authorization: Bearer <token>`. */
  oauthToken?: string;
  /** The key's user (`viewer`). */
  viewer: { id: string; name: string };
}

const AUTHENTICATION_ERROR = {
  message: 'Authentication required, not authenticated',
  extensions: {
    type: 'authentication error',
    code: 'AUTHENTICATION_ERROR',
    userPresentableMessage: 'You need to authenticate to access this operation.',
  },
};

/**
 * Linear's GraphQL API for the operations the platform sends, checking authentication as Linear does: a personal API
 * key as the whole Authorization header, an OAuth token as `Bearer <token>`; anything else (or a revoked key) answers
 * HTTP 400 with Linear's AUTHENTICATION_ERROR.
 */
export async function startScriptedLinear(options: ScriptedLinearOptions): Promise<ScriptedLinear> {
  const linear: Omit<ScriptedLinear, 'url' | 'close'> = {
    calls: [],
    comments: new Map(),
    states: new Map(),
    revoked: false,
    unavailable: 0,
  };
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const authenticated = (authorization: string) =>
    !linear.revoked &&
    (authorization === options.apiKey ||
      (options.oauthToken !== undefined && authorization === `Bearer ${options.oauthToken}`));

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let request: { query?: unknown; variables?: Record<string, unknown> } = {};
      try {
        request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof request;
      } catch {
        return answer(res, 400, { errors: [{ message: 'Body is not JSON' }] });
      }
      const query = typeof request.query === 'string' ? request.query : '';
      const operation =
        ['commentCreate', 'issueUpdate', 'viewer'].find((op) => query.includes(op)) ?? 'unknown';
      const variables = request.variables ?? {};
      const authorization = req.headers.authorization ?? '';
      linear.calls.push({ operation, authorization, variables });
      if (req.method !== 'POST' || req.url !== '/graphql') return answer(res, 404, { errors: [] });
      if (linear.unavailable > 0) {
        linear.unavailable -= 1;
        return answer(res, 503, { errors: [{ message: 'Service unavailable' }] });
      }
      if (!authenticated(authorization)) return answer(res, 400, { errors: [AUTHENTICATION_ERROR] });
      const input = (variables.input ?? {}) as Record<string, unknown>;
      const push = (map: Map<string, string[]>, key: string, value: string) =>
        map.set(key, [...(map.get(key) ?? []), value]);
      switch (operation) {
        case 'viewer':
          return answer(res, 200, { data: { viewer: options.viewer } });
        case 'commentCreate':
          push(linear.comments, String(input.issueId), String(input.body));
          return answer(res, 200, { data: { commentCreate: { success: true } } });
        case 'issueUpdate':
          push(linear.states, String(variables.id), String(input.stateId));
          return answer(res, 200, { data: { issueUpdate: { success: true } } });
        default:
          return answer(res, 400, { errors: [{ message: 'Unknown operation' }] });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(linear, {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
