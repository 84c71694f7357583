import type { PrismaClient, SlackApp } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';
import pLimit from 'p-limit';
import { nextAttemptDelay } from '../../events/retry-schedule';
import { sessionLinkOf } from '../../events/event-body';
import { runOutcomeLines } from '../../events/run-outcome-text';
import type { SecretCipher } from '../../secrets/secret-cipher';
import { setRunMetadata } from '../integration-runs';
import { slackClient, slackFailure, type SlackApiConfig } from './slack-api';
import { botToken, markSlackAppBroken } from './slack-apps';

export interface SlackPosterDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  slack: SlackApiConfig;
  publicApiBaseUrl: string;
  logger: Logger;
  intervalMs: number;
}

/** Posts claimed per pass (one of each run at most) and sent at the same time. */
const BATCH = 50;
const CONCURRENCY = 4;
/** A claimed post is due again after this (a crashed orchestrator's claims are taken over), longer than a call. */
const LEASE_MS = 60_000;
/** The agent's answer quoted in the thread at most (Slack's limit is 40,000 characters; the session has it all). */
const MAX_SUMMARY = 3_000;
/**
 * Waits before each attempt of a post (nextAttemptDelay's schedule: the first is at once): about 45 minutes of retries
 * of a post Slack could not take, then it is dropped.
 */
const RETRY_SCHEDULE_MS = [0, 1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000];

interface Claimed {
  id: bigint;
  slackAppId: string;
  runId: string;
  state: string;
  attempts: number;
}

type PostedRun = {
  id: string;
  title: string;
  state: string;
  statusMessage: string | null;
  execution: number;
  metadata: unknown;
};

/**
 * Sends the messages Slack apps' runs owe their threads (the `SlackPost` rows the run state changes wrote). A pass
 * claims the due posts by pushing their `nextAttemptAt` past a lease, only the oldest of each run (so a thread reads
 * queued → working → the outcome, and a slash command's first post, which opens the thread, goes before the others),
 * posts them with the app's bot token, and deletes each once Slack took it. A post Slack could not take now (down,
 * rate limited, 5xx) is retried on RETRY_SCHEDULE_MS, across restarts; one Slack refused for good is dropped with a
 * log line; a token Slack revoked marks the app broken with Slack's reason and drops what it still owed.
 */
export class SlackPoster {
  readonly loop: BackgroundLoop;

  constructor(private readonly deps: SlackPosterDeps) {
    this.loop = new BackgroundLoop({
      name: 'slack poster',
      dependency: 'postgres',
      intervalMs: deps.intervalMs,
      run: () => this.postAll(),
      logger: deps.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  kick(): Promise<void> {
    return this.loop.trigger();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async postAll(): Promise<void> {
    // A run's next post is due once the one before it went: passes until nothing is due.
    while ((await this.pass()) > 0);
  }

  private async pass(): Promise<number> {
    const { db } = this.deps;
    const claimed = await db.$queryRaw<Claimed[]>`
      UPDATE "SlackPost" p SET "nextAttemptAt" = now() + ${LEASE_MS} * interval '1 millisecond'
        FROM (SELECT s.id FROM "SlackPost" s
               WHERE s."nextAttemptAt" <= now()
                 AND NOT EXISTS (SELECT 1 FROM "SlackPost" e WHERE e."runId" = s."runId" AND e.id < s.id)
               ORDER BY s.id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) due
       WHERE p.id = due.id
      RETURNING p.id, p."slackAppId", p."runId"::text AS "runId", p.state, p.attempts`;
    if (claimed.length === 0) return 0;
    const apps = new Map(
      (
        await db.slackApp.findMany({ where: { id: { in: [...new Set(claimed.map((c) => c.slackAppId))] } } })
      ).map((a) => [a.id, a]),
    );
    const limit = pLimit(CONCURRENCY);
    await Promise.all(claimed.map((post) => limit(() => this.send(post, apps.get(post.slackAppId)))));
    return claimed.length;
  }

  private async send(post: Claimed, app: SlackApp | undefined): Promise<void> {
    const { db, logger } = this.deps;
    const log = logger.child({ runId: post.runId, slackAppId: post.slackAppId, state: post.state });
    const done = () => db.slackPost.deleteMany({ where: { id: post.id } });
    const run = await db.run.findUnique({
      where: { id: post.runId },
      select: { id: true, title: true, state: true, statusMessage: true, execution: true, metadata: true },
    });
    if (!app || app.status !== 'active' || !run) return void (await done());
    const metadata = (run.metadata ?? {}) as Record<string, string>;
    const channel = metadata.slack_channel ?? '';
    const threadTs = metadata.slack_thread_ts;
    try {
      const client = slackClient(this.deps.slack, botToken(this.deps.cipher, app));
      const sent = await client.chat.postMessage({
        channel,
        text: await this.text(post.state, run),
        ...(threadTs ? { thread_ts: threadTs } : {}),
        unfurl_links: false,
      });
      const ts = threadTs ?? sent.ts;
      // The first post of a slash command's run opens its thread.
      if (!threadTs && ts) await setRunMetadata(db, run.id, { slack_thread_ts: ts });
      if (ts)
        await db.slackThread.createMany({
          data: [{ slackAppId: app.id, channel, threadTs: ts, runId: run.id }],
          skipDuplicates: true,
        });
      await done();
      log.debug('posted in the Slack thread');
    } catch (err) {
      const failure = slackFailure(err);
      if (failure.kind === 'revoked') {
        log.warn({ slack: failure.reason }, 'Slack refused the bot token: the app is marked broken');
        return markSlackAppBroken(db, app.id, `Slack refused the bot token: ${failure.reason}`);
      }
      const delay =
        failure.kind === 'transient'
          ? nextAttemptDelay(RETRY_SCHEDULE_MS, post.attempts + 1, failure.retryAfterMs)
          : undefined;
      if (delay === undefined) {
        log.warn({ slack: failure.reason, attempts: post.attempts + 1 }, 'Slack post dropped');
        return void (await done());
      }
      log.info({ slack: failure.reason, retryInMs: delay }, 'Slack post failed; retrying later');
      await db.slackPost.updateMany({
        where: { id: post.id },
        data: {
          attempts: { increment: 1 },
          lastError: failure.reason.slice(0, 500),
          nextAttemptAt: new Date(Date.now() + delay),
        },
      });
    }
  }

  /** The message for the state the run entered: queued (a follow-up says so), working, or the outcome. */
  private async text(state: string, run: PostedRun): Promise<string> {
    const link = sessionLinkOf(this.deps.publicApiBaseUrl, run.id);
    if (state === 'QUEUED')
      return run.execution > 1
        ? `Follow-up queued. Session: ${link}`
        : `Queued: *${run.title}*. Session: ${link}`;
    if (state === 'INPROGRESS') return 'Working on it…';
    const [pulls, answer] = await Promise.all([
      this.deps.db.artifact.findMany({
        where: { runId: run.id, type: 'PULL_REQUEST' },
        orderBy: { createdAt: 'asc' },
        select: { data: true },
      }),
      this.deps.db.runEvent.findFirst({
        where: { runId: run.id, execution: run.execution, kind: 'agent_message' },
        orderBy: { id: 'desc' },
        select: { data: true },
      }),
    ]);
    const [outcome, ...links] = runOutcomeLines(
      { ...run, state },
      pulls.map((a) => String((a.data as { url?: unknown }).url)),
      this.deps.publicApiBaseUrl,
      '*',
    );
    // The agent's last message is the summary; the session has the rest.
    const summary = String((answer?.data as { text?: unknown } | undefined)?.text ?? '').trim();
    const cut = summary.length > MAX_SUMMARY ? `${summary.slice(0, MAX_SUMMARY)}…` : summary;
    return [outcome, ...(cut ? [cut] : []), ...links].join('\n');
  }
}
