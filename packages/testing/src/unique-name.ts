import { randomUUID } from 'node:crypto';

/** `test-<uuid>`-style names so tests sharing one server never see each other's queues, topics or keys. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}
