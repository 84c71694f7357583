import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseRecord, type KeptRecord, type RecordStore, type RecordTarget } from './record-store';

/**
 * Adoption records on the runner's disk, for its next process (bubblewrap): one small file per run in a directory of
 * the runner's own (mode 0700: a record holds the run's keys), replaced whole on each write.
 */
export class RecordFiles implements RecordStore {
  constructor(private readonly dir: string) {}

  async write(target: RecordTarget, json: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    const temporary = `${this.file(target.run_id)}.tmp`;
    await writeFile(temporary, json, { mode: 0o600 });
    await rename(temporary, this.file(target.run_id));
  }

  async remove(target: RecordTarget): Promise<void> {
    await rm(this.file(target.run_id), { force: true });
  }

  /** The file just written is the hand-over: the next process of this runner reads it. */
  async handOver(): Promise<void> {}

  async take(): Promise<KeptRecord[]> {
    const kept: KeptRecord[] = [];
    for (const name of await readdir(this.dir).catch((): string[] => [])) {
      if (!name.endsWith('.json')) continue;
      const text = await readFile(path.join(this.dir, name), 'utf8').catch(() => undefined);
      kept.push({ json: text === undefined ? undefined : parseRecord(text) });
    }
    return kept;
  }

  private file(runId: string): string {
    return path.join(this.dir, `${path.basename(runId)}.json`);
  }
}
