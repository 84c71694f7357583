import { FollowupInbox } from './followup-inbox';

describe('FollowupInbox', () => {
  it('hands queued messages first, then waits for the next one', async () => {
    const inbox = new FollowupInbox();
    inbox.push('a');
    const signal = new AbortController().signal;
    expect(await inbox.next(signal, 1000)).toBe('a');
    const waiting = inbox.next(signal, 1000);
    inbox.push('b');
    expect(await waiting).toBe('b');
    inbox.push('c');
    inbox.push('d');
    expect(inbox.drain()).toEqual(['c', 'd']);
    expect(inbox.drain()).toEqual([]);
  });

  it('resolves undefined on timeout and on abort', async () => {
    const inbox = new FollowupInbox();
    expect(await inbox.next(new AbortController().signal, 10)).toBeUndefined();
    const abort = new AbortController();
    const waiting = inbox.next(abort.signal, 10_000);
    abort.abort();
    expect(await waiting).toBeUndefined();
    // An aborted waiter does not swallow later messages.
    inbox.push('kept');
    expect(inbox.drain()).toEqual(['kept']);
  });

  it('keeps every follow-up it handed over, in order, whichever way it was taken; not those still queued', async () => {
    const inbox = new FollowupInbox();
    inbox.push('a');
    expect(await inbox.next(new AbortController().signal, 10_000)).toBe('a');
    const waiting = inbox.next(new AbortController().signal, 10_000);
    inbox.push('b');
    await waiting;
    inbox.push('c');
    inbox.drain();
    inbox.push('queued');
    expect(inbox.taken()).toEqual(['a', 'b', 'c']);
  });
});
