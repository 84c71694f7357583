import { FollowupInbox } from './followup-inbox';

const f = (message: string) => ({ followup_id: `id-${message}`, message });

describe('FollowupInbox', () => {
  it('hands queued messages first, then waits for the next one', async () => {
    const inbox = new FollowupInbox();
    inbox.push(f('a'));
    const signal = new AbortController().signal;
    expect(await inbox.next(signal, 1000)).toBe('a');
    const waiting = inbox.next(signal, 1000);
    inbox.push(f('b'));
    expect(await waiting).toBe('b');
    inbox.push(f('c'));
    inbox.push(f('d'));
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
    inbox.push(f('kept'));
    expect(inbox.drain()).toEqual(['kept']);
  });

  it('keeps every follow-up it handed over, in order, whichever way it was taken; not those still queued', async () => {
    const inbox = new FollowupInbox();
    inbox.push(f('a'));
    expect(await inbox.next(new AbortController().signal, 10_000)).toBe('a');
    const waiting = inbox.next(new AbortController().signal, 10_000);
    inbox.push(f('b'));
    await waiting;
    inbox.push(f('c'));
    inbox.drain();
    inbox.push(f('queued'));
    expect(inbox.taken()).toEqual(['a', 'b', 'c']);
  });

  it('keeps a follow-up offered again once, by its ID, queued or already handed over', () => {
    const inbox = new FollowupInbox();
    inbox.push(f('a'));
    inbox.push(f('a'));
    expect(inbox.drain()).toEqual(['a']);
    inbox.push(f('a'));
    inbox.push({ followup_id: 'id-b', message: 'a' }); // the same text sent twice is two follow-ups
    expect(inbox.drain()).toEqual(['a']);
    expect(inbox.taken()).toEqual(['a', 'a']);
  });

  it('drops what a previous runner process handed over, and acknowledges it again', () => {
    const inbox = new FollowupInbox([f('before')]);
    inbox.push(f('before'));
    inbox.push(f('after'));
    expect(inbox.drain()).toEqual(['after']);
    expect(inbox.taken()).toEqual(['before', 'after']);
    expect(inbox.acknowledged()).toEqual(['id-before', 'id-after']);
  });

  it('acknowledges a follow-up once the harness has taken it, not while it is only queued', () => {
    const inbox = new FollowupInbox();
    inbox.push(f('a'));
    expect(inbox.acknowledged()).toEqual([]);
    inbox.drain();
    expect(inbox.acknowledged()).toEqual(['id-a']);
  });

  it('with a journal, acknowledges a follow-up only once the journal has written it down', async () => {
    const inbox = new FollowupInbox();
    const written: string[][] = [];
    let finish = () => undefined as void;
    inbox.keepIn(async () => {
      written.push(inbox.handedFollowups().map((x) => x.followup_id));
      await new Promise<void>((resolve) => (finish = resolve));
    });
    inbox.push(f('a'));
    inbox.drain();
    expect(written).toEqual([['id-a']]);
    expect(inbox.acknowledged()).toEqual([]);
    finish();
    await new Promise(setImmediate);
    expect(inbox.acknowledged()).toEqual(['id-a']);
  });

  it("drops a claim's follow-up offered again and acknowledges it once the harness started with it, after the journal", async () => {
    const inbox = new FollowupInbox([], [f('claimed')]);
    let finish = () => undefined as void;
    inbox.keepIn(() => new Promise<void>((resolve) => (finish = resolve)));
    inbox.push(f('claimed'));
    expect(inbox.drain()).toEqual([]);
    expect(inbox.acknowledged()).toEqual([]);
    inbox.startedWith();
    expect(inbox.acknowledged()).toEqual([]);
    finish();
    await new Promise(setImmediate);
    expect(inbox.acknowledged()).toEqual(['id-claimed']);
    // Taken back by the next process: its agent has them, so they are acknowledged and dropped at once.
    const next = new FollowupInbox([], [f('claimed')], true);
    next.push(f('claimed'));
    expect(next.drain()).toEqual([]);
    expect(next.acknowledged()).toEqual(['id-claimed']);
  });

  it('acknowledges nothing while the journal cannot write a follow-up down, and does once a later poll writes it', async () => {
    const inbox = new FollowupInbox([], [f('claimed')]);
    let fails = true;
    const written: string[][] = [];
    inbox.keepIn(async () => {
      if (fails) throw new Error('lease save refused');
      written.push(inbox.handedFollowups().map((x) => x.followup_id));
    });
    inbox.startedWith();
    inbox.push(f('a'));
    inbox.drain();
    await new Promise(setImmediate);
    expect(inbox.acknowledged()).toEqual([]);
    await new Promise(setImmediate);
    expect(written).toEqual([]);
    fails = false;
    // The poll that finds the journal failed writes it again; the next one acknowledges what was written.
    expect(inbox.acknowledged()).toEqual([]);
    await new Promise(setImmediate);
    expect(written).toEqual([['id-a']]);
    expect(inbox.acknowledged()).toEqual(['id-claimed', 'id-a']);
  });
});
