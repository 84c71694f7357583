import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { sessionLinkOf } from '../../events/event-body';
import { runOutcomeLines } from '../../events/run-outcome-text';
import type { SecretCipher } from '../../secrets/secret-cipher';
import { setRunMetadata } from '../integration-runs';
import { ReportQueue, type QueuedReport, type ReportQueueShape, type Sent } from '../report-queue';
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

/** The agent's answer quoted in the thread at most (Slack's limit is 40,000 characters; the session has it all). */
const MAX_SUMMARY = 3_000;
/**
 * Waits before each attempt of a post (nextAttemptDelay's schedule: the first is at once): about 45 minutes of retries
 * of a post Slack could not take, then it is dropped.
 */
const RETRY_SCHEDULE_MS = [0, 1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000];

/** The queue of Slack thread posts. */
const QUEUE: ReportQueueShape = {
  name: 'slack poster',
  table: 'SlackPost',
  ownerColumn: 'slackAppId',
  columns: ['state'],
  keepSettled: false,
  batch: 50,
  concurrency: 4,
  leaseMs: 60_000,
};

type PostedRun = {
  id: string;
  title: string;
  state: string;
  statusMessage: string | null;
  execution: number;
  metadata: unknown;
};

/**
 * Sends the messages Slack apps' runs owe their threads (the `SlackPost` rows the run state changes wrote) through the
 * integrations' report queue (report-queue.ts): a run's posts in order, so a thread reads queued → working → the
 * outcome, and a slash command's first post, which opens the thread, goes before the others. Posted with the app's
 * bot token; a post Slack could not take now (down, rate limited, 5xx) is retried across restarts, one Slack refused
 * for good is dropped, a token Slack revoked marks the app broken with Slack's reason and drops what it still owed.
 */
export class SlackPoster {
  readonly queue: ReportQueue<{ state: string }>;

  constructor(private readonly deps: SlackPosterDeps) {
    this.queue = new ReportQueue(QUEUE, {
      ...deps,
      schedule: RETRY_SCHEDULE_MS,
      send: (post, log) => this.send(post, log),
      markBroken: (id, reason) => markSlackAppBroken(deps.db, id, `Slack refused the bot token: ${reason}`),
    });
  }

  private async send(post: QueuedReport & { state: string }, log: Logger): Promise<Sent> {
    const { db } = this.deps;
    const [app, run] = await Promise.all([
      db.slackApp.findUnique({ where: { id: post.owner } }),
      db.run.findUnique({
        where: { id: post.runId },
        select: { id: true, title: true, state: true, statusMessage: true, execution: true, metadata: true },
      }),
    ]);
    if (!app || app.status !== 'active' || !run)
      return { kind: 'dropped', reason: 'the app or the run is gone' };
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
      log.debug({ state: post.state }, 'posted in the Slack thread');
      return { kind: 'done' };
    } catch (err) {
      const failure = slackFailure(err);
      if (failure.kind === 'revoked') return { kind: 'refused', reason: failure.reason };
      return failure.kind === 'transient'
        ? { kind: 'retry', reason: failure.reason, retryAfterMs: failure.retryAfterMs }
        : { kind: 'dropped', reason: failure.reason };
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
