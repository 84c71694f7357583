import { Client } from 'pg';
import type { Logger } from '@conveyor/logger';
import { Backoff, OutageLog } from '@conveyor/runtime';

/**
 * Reconnection delays: from 500 ms, doubled up to 5 s. The cap is low because the services' readiness waits for this
 * connection (its notifications are lost while it is down), and a reconnection attempt costs PostgreSQL one login.
 */
const RECONNECT_BACKOFF = { initialMs: 500, maxMs: 5_000 };

export interface ChannelListenerOptions {
  databaseUrl: string;
  channel: string;
  onNotification(payload: string): void;
  /**
   * Runs once LISTEN is in place, at start and after every reconnection: notifications sent while the connection was
   * down are lost, so this is where a listener catches up.
   */
  onListening(): Promise<void>;
  logger: Logger;
}

/**
 * LISTEN on a connection of its own (PostgreSQL notifications need one), reconnecting with capped exponential backoff
 * after it drops: the outage is logged once when the connection is lost and once when it listens again.
 */
export class ChannelListener {
  private client: Client | undefined;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly backoff = new Backoff(RECONNECT_BACKOFF.initialMs, RECONNECT_BACKOFF.maxMs);
  private readonly outage: OutageLog;

  constructor(private readonly options: ChannelListenerOptions) {
    this.outage = new OutageLog(
      options.logger,
      { loop: `${options.channel} listener`, dependency: 'postgres' },
      { connection: true },
    );
  }

  start(): Promise<void> {
    return this.connect();
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const { channel } = this.options;
    const client = new Client({ connectionString: this.options.databaseUrl });
    client.on('notification', (msg) => {
      if (msg.channel === channel) this.options.onNotification(msg.payload ?? '');
    });
    client.on('error', (err) => this.dropped(client, err));
    client.on('end', () => this.dropped(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
    } catch (err) {
      // Not ours to keep: a failed connection may still hold a socket.
      client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    try {
      await this.options.onListening();
    } catch (err) {
      // Not caught up: listen afresh (and catch up again) rather than carry on as if nothing was missed.
      this.dropped(client, err);
      return;
    }
    this.backoff.reset();
    this.outage.succeeded();
  }

  private dropped(client: Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.scheduleReconnect(err);
  }

  private scheduleReconnect(err: unknown): void {
    if (this.stopped) return;
    const delay = this.backoff.next();
    this.outage.failed(err, delay);
    this.reconnectTimer = setTimeout(() => {
      this.connect().catch((failure: unknown) => this.scheduleReconnect(failure));
    }, delay);
    this.reconnectTimer.unref();
  }
}
