/** The execution a record is of, and the runner holding it. */
export interface RecordTarget {
  run_id: string;
  execution: number;
  runner_id: string;
}

/** A record as it was kept (parsed JSON, or undefined when unreadable) and, when runs move between runners, the new holder. */
export interface KeptRecord {
  json: unknown;
  holder?: string;
}

/** Where adoption records are kept (adoption-records.ts): the runner's own disk, or the run's lease. */
export interface RecordStore {
  write(target: RecordTarget, json: string): Promise<void>;
  /** The execution ended here: nobody takes it back. */
  remove(target: RecordTarget): Promise<void>;
  /** The runner stops and leaves the execution, its record just written, to whoever takes it back. */
  handOver(target: RecordTarget): Promise<void>;
  /** The records to take back now; a store moving runs between runners hands out at most `limit`. */
  take(limit?: number): Promise<KeptRecord[]>;
}

export const parseRecord = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // cut short by a crash mid-write: nothing to take back
  }
};
