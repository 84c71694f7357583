import { Client } from 'pg';

const RECONNECT_DELAY_MS = 1_000;

export interface ChannelListenerOptions {
  databaseUrl: string;
  channel: string;
  onNotification(payload: string): void;
  /**
   * Runs once LISTEN is in place, at start and after every reconnection: notifications sent while the connection was
   * down are lost, so this is where a listener catches up.
   */
  onListening(): Promise<void>;
  warn(detail: { err: string }, message: string): void;
}

/** LISTEN on a connection of its own (PostgreSQL notifications need one), reconnecting a second after it drops. */
export class ChannelListener {
  private client: Client | undefined;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ChannelListenerOptions) {}

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
    client.on('error', (err) => {
      this.options.warn({ err: err.message }, `${channel} listener connection failed; reconnecting`);
      this.dropped(client);
    });
    client.on('end', () => this.dropped(client));
    await client.connect();
    await client.query(`LISTEN ${channel}`);
    this.client = client;
    try {
      await this.options.onListening();
    } catch (err) {
      // Not caught up: listen afresh (and catch up again) rather than carry on as if nothing was missed.
      this.options.warn(
        { err: (err as Error).message },
        `${channel} listener could not catch up; reconnecting`,
      );
      this.dropped(client);
    }
  }

  private dropped(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    this.reconnectTimer = setTimeout(() => {
      this.connect().catch((err: Error) => {
        this.options.warn({ err: err.message }, `${this.options.channel} listener reconnect failed`);
        this.scheduleReconnect();
      });
    }, RECONNECT_DELAY_MS);
  }
}
