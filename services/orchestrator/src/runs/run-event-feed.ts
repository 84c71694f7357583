import { ChannelListener } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';

/** The channel the RunEvent insert trigger notifies with the run's ID (migration 20261123210000_run_event_notify). */
const CHANNEL = 'run_events';

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
  private readonly listener: ChannelListener;

  constructor(databaseUrl: string, logger: Logger) {
    this.listener = new ChannelListener({
      databaseUrl,
      channel: CHANNEL,
      onNotification: (runId) => this.wake(this.watchers.get(runId)),
      // Whatever was recorded while nobody listened is read now.
      onListening: async () => {
        for (const set of this.watchers.values()) this.wake(set);
      },
      logger,
    });
  }

  start(): Promise<void> {
    return this.listener.start();
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
    return this.listener.connected;
  }

  /** Ends every watch stream first: a graceful gRPC shutdown would otherwise wait for them until its deadline. */
  async stop(): Promise<void> {
    for (const set of this.watchers.values()) for (const watcher of set) watcher.end();
    this.watchers.clear();
    await this.listener.stop();
  }

  private wake(set: Set<RunWatcher> | undefined): void {
    for (const watcher of set ?? []) watcher.wake();
  }
}
