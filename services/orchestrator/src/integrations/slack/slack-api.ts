import { AppError, invalidField } from '@conveyor/errors';
import { ErrorCode, LogLevel, WebClient, type Logger as SlackLogger } from '@slack/web-api';

/** Where Slack's Web API is (SLACK_API_URL) and how long a call may take. */
export interface SlackApiConfig {
  baseUrl: string;
  timeoutMs: number;
}

/** The Web API client logs nothing of its own: its failures are classified and logged by the caller, without the token. */
const silent: SlackLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  setLevel: () => undefined,
  getLevel: () => LogLevel.ERROR,
  setName: () => undefined,
};

/**
 * A Web API client for one bot token. No retries of its own: a failed post stays in the table and is retried on the
 * poster's schedule (slack-poster.ts), which survives a restart; a rate-limited call is answered at once with its
 * Retry-After instead of waiting in this process.
 */
export const slackClient = (config: SlackApiConfig, token: string): WebClient =>
  new WebClient(token, {
    slackApiUrl: config.baseUrl.endsWith('/') ? config.baseUrl : `${config.baseUrl}/`,
    timeout: config.timeoutMs,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    logger: silent,
  });

/** Slack's answers meaning the token will never work again: the app is marked broken with Slack's reason. */
const REVOKED = new Set([
  'invalid_auth',
  'not_authed',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'team_disabled',
]);

export type SlackFailure =
  | { kind: 'revoked'; reason: string }
  /** Slack refused this call for good (channel_not_found, not_in_channel…): retrying cannot help. */
  | { kind: 'refused'; reason: string }
  | { kind: 'transient'; reason: string; retryAfterMs?: number };

/** What a Web API call's failure means, with Slack's own reason (never the token, which errors do not carry). */
export function slackFailure(err: unknown): SlackFailure {
  const e = err as { code?: unknown; data?: { error?: unknown }; retryAfter?: unknown; message?: unknown };
  if (e.code === ErrorCode.PlatformError) {
    const reason = typeof e.data?.error === 'string' ? e.data.error : 'unknown_error';
    return REVOKED.has(reason) ? { kind: 'revoked', reason } : { kind: 'refused', reason };
  }
  if (e.code === ErrorCode.RateLimitedError && typeof e.retryAfter === 'number')
    return { kind: 'transient', reason: 'ratelimited', retryAfterMs: e.retryAfter * 1000 };
  if (e.code === ErrorCode.HTTPError) return { kind: 'transient', reason: String(e.message) };
  return { kind: 'transient', reason: 'Slack could not be reached' };
}

/** What auth.test says of a bot token: its workspace and its bot user. */
export interface BotIdentity {
  teamId: string;
  userId: string;
}

/**
 * Checks a bot token with auth.test: a token Slack refuses is a 400 with Slack's reason (nothing is stored), a Slack
 * that cannot be reached a 503.
 */
export async function verifyBotToken(config: SlackApiConfig, token: string): Promise<BotIdentity> {
  let answer: { team_id?: string; user_id?: string };
  try {
    answer = await slackClient(config, token).auth.test();
  } catch (err) {
    const failure = slackFailure(err);
    if (failure.kind === 'transient')
      throw new AppError('resource_unavailable', `Slack could not check bot_token: ${failure.reason}`);
    throw invalidField('bot_token', `Slack refused bot_token: ${failure.reason}`);
  }
  if (!answer.team_id || !answer.user_id)
    throw new AppError(
      'invalid_request',
      'Slack refused bot_token: auth.test named no workspace or bot user',
    );
  return { teamId: answer.team_id, userId: answer.user_id };
}
