import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackMessage {
  channel: string;
  text: string;
  /** The thread it was posted in (absent: a new message in the channel, which starts a thread). */
  threadTs?: string;
  ts: string;
}

export interface ScriptedSlack {
  /** `http://127.0.0.1:<port>/api/`: the platform's SLACK_API_URL. */
  url: string;
  /** Every call: its method and the Authorization header it carried. */
  requests: Array<{ method: string; authorization: string }>;
  /** Messages posted with chat.postMessage, in order. */
  messages: SlackMessage[];
  /** The bot token: anything else answers `{ok:false, error:'invalid_auth'}` as Slack does. */
  token: string;
  /** The token was revoked: every call answers `{ok:false, error:'token_revoked'}`. */
  revoked: boolean;
  /** Slack is down: every call answers 503 (a blip the platform must ride out). */
  unavailable: boolean;
  close(): Promise<void>;
}

export interface ScriptedSlackOptions {
  token: string;
  teamId: string;
  botUserId: string;
}

/**
 * A scripted Slack Web API on a local port: auth.test and chat.postMessage, authenticated the way Slack does (the
 * bot token as `Authorization: Bearer xoxb-…`; a wrong or missing one is `200 {ok:false, error:'invalid_auth'}`),
 * bodies form-encoded or JSON as Slack takes them.
 */
export async function startScriptedSlack(options: ScriptedSlackOptions): Promise<ScriptedSlack> {
  let clock = 1_700_000_000;
  const slack: Omit<ScriptedSlack, 'url' | 'close'> = {
    requests: [],
    messages: [],
    token: options.token,
    revoked: false,
    unavailable: false,
  };

  const fields = (req: IncomingMessage, raw: string): Record<string, unknown> => {
    if (/json/i.test(req.headers['content-type'] ?? ''))
      return JSON.parse(raw || '{}') as Record<string, unknown>;
    return Object.fromEntries(new URLSearchParams(raw));
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
    const authorization = req.headers.authorization ?? '';
    slack.requests.push({ method, authorization });
    if (slack.unavailable) return send(503, { ok: false, error: 'service_unavailable' });
    if (slack.revoked) return send(200, { ok: false, error: 'token_revoked' });
    if (authorization !== `Bearer ${slack.token}`) return send(200, { ok: false, error: 'invalid_auth' });
    const body = fields(req, raw);
    if (method === 'auth.test')
      return send(200, {
        ok: true,
        url: 'https://acme.slack.test/',
        team: 'Acme',
        user: 'conveyor',
        team_id: options.teamId,
        user_id: options.botUserId,
        bot_id: 'B0CONVEYOR',
      });
    if (method === 'chat.postMessage') {
      const channel = typeof body.channel === 'string' ? body.channel : '';
      const text = typeof body.text === 'string' ? body.text : '';
      if (!channel) return send(200, { ok: false, error: 'channel_not_found' });
      if (!text) return send(200, { ok: false, error: 'no_text' });
      const ts = `${clock++}.000100`;
      const threadTs = typeof body.thread_ts === 'string' && body.thread_ts ? body.thread_ts : undefined;
      slack.messages.push({ channel, text, ts, ...(threadTs ? { threadTs } : {}) });
      return send(200, { ok: true, channel, ts, message: { text, ts, user: options.botUserId } });
    }
    return send(200, { ok: false, error: 'unknown_method' });
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(slack, {
    url: `http://127.0.0.1:${port}/api/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
