import type { Automation, Webhook, WebhookDelivery } from '@conveyor/db';
import type { NewRun } from '../runs/insert-runs';

/** What the delivery log records for one automation evaluated against one accepted delivery. */
export interface AutomationOutcome {
  automation_id: string;
  automation_name: string;
  matched: boolean;
  mismatches?: string[];
  error?: string;
  run_id?: string;
}

/** A log entry as the processor writes it; outcome and runs are added when the entry is processed. */
export type NewDeliveryEntry = Omit<WebhookDelivery, 'outcome' | 'runIds' | 'createdAt'>;

/** An accepted entry once its automations were evaluated. */
export interface ProcessedDelivery {
  id: string;
  outcomes: AutomationOutcome[];
  runIds: string[];
}

/** What processing locked entries produced: the entries to mark processed and the runs they start. */
export interface LockedWork {
  processed: ProcessedDelivery[];
  runs: NewRun[];
}

/** A signed message an accepted delivery carries, claimed for its webhook by the Kafka message at `sourcePosition`. */
export interface SignedContentClaim {
  webhookId: string;
  digest: string;
  sourcePosition: string;
}

/** The persistence the delivery processor needs: the delivery log, the webhooks and automations it reads, runs. */
export interface DeliveryStore {
  /** The webhooks among these UIDs that still exist. */
  findWebhooks(uids: string[]): Promise<Webhook[]>;
  /** The log entries written for these Kafka positions (`topic:partition:offset`). */
  findEntriesAt(positions: string[]): Promise<WebhookDelivery[]>;
  /**
   * Writes the entries at once, silently leaving out each one whose position is already logged or whose
   * `acceptedDeliveryId` its webhook already accepted (by an earlier entry, also one earlier in this call).
   */
  insertEntries(entries: NewDeliveryEntry[]): Promise<void>;
  /**
   * Claims each signed message for its webhook unless claimed before (by an earlier message, also one earlier in
   * this call); returns the claims as stored, so a claim whose position differs from the caller's is a replay.
   */
  claimSignedContents(claims: SignedContentClaim[]): Promise<SignedContentClaim[]>;
  /** The enabled automations of these teams whose trigger selects one of these webhooks, oldest first. */
  findEnabledAutomations(teamIds: string[], webhookUids: string[]): Promise<Automation[]>;
  /**
   * In one transaction: locks the entries (in id order, so consumers handed overlapping batches cannot deadlock),
   * hands the ids of those not processed yet to `work`, then writes the runs it returns and marks the entries it
   * returns processed. Another caller locking the same entries waits, then finds them processed.
   */
  processLocked(ids: string[], work: (open: ReadonlySet<string>) => Promise<LockedWork>): Promise<LockedWork>;
}
