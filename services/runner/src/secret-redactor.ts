/** What replaces a secret wherever it shows up. */
export const REDACTED = '[REDACTED]';

/** Shorter values would match ordinary text; provider keys are far longer. */
const MIN_SECRET_LENGTH = 8;

/**
 * Removes known secrets (the run's provider key) from everything a run records: events, the conversation built
 * from them, and the transcript. A key should never get there, since it never enters the sandbox; this is the net
 * for when an upstream echoes it back or an operator's adapter prints it.
 */
export class SecretRedactor {
  private readonly secrets = new Set<string>();

  add(secret: string): void {
    if (secret.length < MIN_SECRET_LENGTH) return;
    this.secrets.add(secret);
    // The form it takes inside a JSON string, when that differs.
    this.secrets.add(JSON.stringify(secret).slice(1, -1));
  }

  text(value: string): string {
    let out = value;
    for (const secret of this.secrets) out = out.split(secret).join(REDACTED);
    return out;
  }

  /** The value with every secret replaced in its JSON form; the same object when it holds none. */
  json<T>(value: T): T {
    if (this.secrets.size === 0) return value;
    const raw = JSON.stringify(value);
    const clean = this.text(raw);
    return clean === raw ? value : (JSON.parse(clean) as T);
  }

  /** Byte-wise, so a transcript that is not valid UTF-8 keeps its other bytes. */
  buffer(value: Buffer): Buffer {
    let out = value;
    for (const secret of this.secrets) {
      const needle = Buffer.from(secret);
      const parts: Buffer[] = [];
      let from = 0;
      for (let at = out.indexOf(needle); at !== -1; at = out.indexOf(needle, from)) {
        parts.push(out.subarray(from, at), Buffer.from(REDACTED));
        from = at + needle.length;
      }
      if (parts.length > 0) out = Buffer.concat([...parts, out.subarray(from)]);
    }
    return out;
  }
}
