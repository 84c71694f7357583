import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  apiCall,
  startEventReceiver,
  startPlatform,
  type EventReceiver,
  type Json,
  type RunningPlatform,
} from '@conveyor/testing';

/** Debian's chromium, installed by `scripts/infra.sh browser`; playwright-core never downloads a browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

export const originOf = (platform: RunningPlatform): string => new URL(platform.apiUrl).origin;

/** What every console suite runs against: the platform, an event receiver it may deliver to, and Chromium. */
export interface ConsoleSetup {
  platform: RunningPlatform;
  /** A receiver on loopback the platform's event endpoints may reach. */
  rx: EventReceiver;
  browser: Browser;
  /** A page in its own context, 1,400 px wide (not signed in). */
  page: Page;
  origin: string;
  stop(): Promise<void>;
}

/** Starts the services (with `env` on top of what lets them deliver events to `rx`), Chromium and one page. */
export async function startConsole(env: NodeJS.ProcessEnv = {}): Promise<ConsoleSetup> {
  const rx = await startEventReceiver();
  const platform = await startPlatform({
    env: { EGRESS_ALLOWED_ADDRESSES: new URL(rx.url).host, EVENT_HTTP_ALLOWED_HOSTS: '127.0.0.1', ...env },
  });
  const browser = await launchChromium();
  const page = await (await browser.newContext({ viewport: { width: WIDTHS[0], height: 900 } })).newPage();
  return {
    platform,
    rx,
    browser,
    page,
    origin: originOf(platform),
    stop: async () => {
      rx.close();
      await browser.close();
      await platform.stop();
    },
  };
}

export async function createRun(
  platform: RunningPlatform,
  prompt: string,
  title: string,
  key = platform.apiKey,
): Promise<Json & { run_id: string }> {
  const created = await apiCall(platform, 'POST', '/agent/runs', { prompt, title }, key);
  if (created.status !== 200)
    throw new Error(`create run: ${created.status} ${JSON.stringify(created.body)}`);
  return (await apiCall(platform, 'GET', `/agent/runs/${String(created.body.run_id)}`, undefined, key))
    .body as Json & { run_id: string };
}

/** The path of the run's session link: the URL the API hands out for watching a run. */
export function sessionPath(run: Json): string {
  if (typeof run.session_link !== 'string') throw new Error(`run ${String(run.run_id)} has no session_link`);
  return new URL(run.session_link).pathname;
}

export async function signIn(page: Page, platform: RunningPlatform, key: string): Promise<void> {
  await page.goto(`${originOf(platform)}/console/sign-in`);
  await page.fill('#api-key', key);
  await page.click('button[type=submit]');
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Waits until the element's text satisfies the predicate (the page updates itself; nothing here reloads it). */
export async function waitForText(
  page: Page,
  selector: string,
  predicate: string,
  timeoutMs = 60_000,
): Promise<void> {
  await page.waitForFunction(
    ({ sel, re }) =>
      Array.from(document.querySelectorAll(sel)).some((el) => new RegExp(re).test(el.textContent ?? '')),
    { sel: selector, re: predicate },
    { timeout: timeoutMs, polling: 100 },
  );
}

/** Reads one SSE response until `done` says so, returning the parsed events with their ids. */
export async function readSse(
  url: string,
  headers: Record<string, string>,
  done: (events: Array<{ id: number; kind: string; data: Json }>) => boolean,
): Promise<Array<{ id: number; kind: string; data: Json }>> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  if (res.status !== 200 || !res.body) throw new Error(`SSE ${url}: ${res.status} ${await res.text()}`);
  const events: Array<{ id: number; kind: string; data: Json }> = [];
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (\d+)$/m.exec(block);
        const data = /^data: (.*)$/m.exec(block);
        if (id && data && /^event: run_event$/m.test(block)) {
          const parsed = JSON.parse(data[1]!) as { kind: string; data: Json };
          events.push({ id: Number(id[1]), kind: parsed.kind, data: parsed.data });
          if (done(events)) return events;
        }
      }
    }
  } finally {
    controller.abort();
  }
  throw new Error(`SSE ${url} ended after ${events.length} events`);
}

/** Set CONSOLE_SCREENSHOTS=<dir> to keep full-page screenshots of the pages as test artifacts. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.CONSOLE_SCREENSHOTS)
    await page.screenshot({
      path: path.join(process.env.CONSOLE_SCREENSHOTS, `${name}.png`),
      fullPage: true,
    });
}

/** The widths the console is made for: a desktop window and a phone. */
export const WIDTHS = [1400, 390] as const;

/** Screenshots of the page as it is now at both widths (then back to the first). */
export async function screenshotsAtBothWidths(page: Page, name: string): Promise<void> {
  for (const width of [...WIDTHS].reverse()) {
    await page.setViewportSize({ width, height: 900 });
    await screenshot(page, `${name}-${width}`);
  }
}

/** A request the console could send: method, path under /console/api, JSON body. */
export type ConsoleRequest = [method: string, path: string, body?: unknown];

/**
 * Sends each request from the page's own session (its cookie and CSRF token), as the page's buttons would, and
 * answers their statuses in order: how a test proves the API refuses what the page does not offer.
 */
export function statusesFromSession(page: Page, requests: ConsoleRequest[]): Promise<number[]> {
  return page.evaluate(async (requests) => {
    const { csrf_token } = (await (await fetch('/console/api/session')).json()) as { csrf_token: string };
    const statuses: number[] = [];
    for (const [method, url, body] of requests) {
      const res = await fetch(`/console/api${url}`, {
        method,
        headers: { 'x-csrf-token': csrf_token, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      statuses.push(res.status);
    }
    return statuses;
  }, requests);
}
