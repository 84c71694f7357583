import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { ProviderProtocol, TokenCounts } from './provider-protocols';

/** JSON bodies larger than this are passed through unmetered (model responses are far smaller). */
const MAX_JSON_BYTES = 16 * 1024 * 1024;

/**
 * Reads usage numbers from a response as it streams past, without changing a byte: SSE (`text/event-stream`) event
 * by event, JSON once complete (Gemini's non-SSE stream is a JSON array of chunks). Within one response the last
 * value of each number wins, since every protocol reports running totals.
 */
export class UsageMeter {
  private counts: Partial<TokenCounts> = {};
  private readonly sse: EventSourceParser | undefined;
  private readonly decoder = new TextDecoder();
  private json: Buffer[] | undefined;
  private jsonBytes = 0;

  constructor(
    private readonly protocol: ProviderProtocol,
    contentType: string,
  ) {
    if (/text\/event-stream/i.test(contentType)) {
      this.sse = createParser({ onEvent: (event) => this.take(event.data) });
    } else if (/json/i.test(contentType)) {
      this.json = [];
    }
  }

  write(chunk: Buffer): void {
    if (this.sse) this.sse.feed(this.decoder.decode(chunk, { stream: true }));
    else if (this.json) {
      this.jsonBytes += chunk.length;
      if (this.jsonBytes > MAX_JSON_BYTES) this.json = undefined;
      else this.json.push(chunk);
    }
  }

  /** The response's usage, or undefined when it reported none (errors, model lists). */
  finish(): TokenCounts | undefined {
    if (this.json) this.take(Buffer.concat(this.json).toString('utf8'));
    if (this.counts.input === undefined && this.counts.output === undefined) return undefined;
    return { input: this.counts.input ?? 0, output: this.counts.output ?? 0 };
  }

  private take(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return; // `[DONE]`, keep-alives and anything else that is not a JSON object carries no usage.
    }
    for (const item of Array.isArray(value) ? value : [value]) {
      this.counts = { ...this.counts, ...this.protocol.usage(item) };
    }
  }
}
