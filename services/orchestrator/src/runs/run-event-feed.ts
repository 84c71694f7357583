import { Client } from 'pg';
import type { Logger } from '@conveyor/logger';

/** The channel the RunEvent insert trigger notifies with the run's ID (migration 20261123210000_run_event_notify). */
const CHANNEL = 'run_events';
const RECONNECT_DELAY_MS = 1_000;

/** A watcher: woken when its run has new events, ended when the orchestrator shuts down. */
export interface RunWatcher {
  wake(): void;
  end(): void;
}

/**
 * One LISTEN connection per orchestrator, fanned out to the WatchRunEvents streams by run ID. A wake-up carries
 * no events: each watcher reads what it has not sent yet, so coalesced notifications lose nothing. After the
 * connection drops, every watcher is woken once it is back, covering whatever was recorded in between.
 */
export class RunEventFeed {
  private readonly watchers = new Map<string, Set<RunWatcher>>();
  private client: Client | undefined;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  /** Wakes the watcher whenever an event of the run is recorded; returns the unsubscribe function. */
  subscribe(runId: string, watcher: RunWatcher): () => void {
    let set = this.watchers.get(runId);
    if (!set) this.watchers.set(runId, (set = new Set()));
    set.add(watcher);
    return () => {
      set.delete(watcher);
      if (set.size === 0 && this.watchers.get(runId) === set) this.watchers.delete(runId);
    };
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Ends every watch stream first: a graceful gRPC shutdown would otherwise wait for them until its deadline. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const set of this.watchers.values()) for (const watcher of set) watcher.end();
    this.watchers.clear();
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl });
    client.on('notification', (msg) => {
      if (msg.channel === CHANNEL && msg.payload) this.wake(this.watchers.get(msg.payload));
    });
    client.on('error', (err) => {
      this.logger.warn({ err: err.message }, 'run event feed connection failed; reconnecting');
      this.dropped(client);
    });
    client.on('end', () => this.dropped(client));
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
    // Whatever was recorded while nobody listened is read now.
    for (const set of this.watchers.values()) this.wake(set);
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
        this.logger.warn({ err: err.message }, 'run event feed reconnect failed');
        this.scheduleReconnect();
      });
    }, RECONNECT_DELAY_MS);
  }

  private wake(set: Set<RunWatcher> | undefined): void {
    for (const watcher of set ?? []) watcher.wake();
  }
}
