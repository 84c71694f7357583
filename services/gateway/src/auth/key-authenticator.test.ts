import { Redis } from 'ioredis';
import { AppError } from '@conveyor/errors';
import { authEpochKeys } from '@conveyor/runtime';
import type { Caller__Output } from '@conveyor/proto';
import type { OrchestratorApi } from '../orchestrator-api';
import { redisAuthEpochs, type AuthEpochs, type EpochStamp } from './auth-epochs';
import { KeyAuthenticator } from './key-authenticator';

// The cache at the level of its rules, with a fake orchestrator port that counts Authenticate calls and epochs held
// in memory (or a Redis that is down or never answers).
const TTL_MS = 60_000;
type Answer = { caller: Caller__Output | null; expires_at: string };
const caller = (over: Partial<Caller__Output> = {}): Caller__Output => ({
  team_id: 'team-1',
  principal_type: 'USER',
  principal_id: 'user-1',
  role: 'MEMBER',
  api_key_id: 'key-1',
  run_id: '',
  display_name: 'Ada',
  email: 'ada@example.test',
  ...over,
});

describe('KeyAuthenticator', () => {
  let clock: number;
  let answers: Map<string, Answer>;
  let stamps: Map<string, EpochStamp>;
  const call = jest.fn((_service: string, _method: string, request: { api_key: string }) => {
    const answer = answers.get(request.api_key);
    return answer
      ? Promise.resolve(answer)
      : Promise.reject(new AppError('authentication_required', 'A valid API key is required'));
  });
  const api = { call } as unknown as Pick<OrchestratorApi, 'call'>;
  const memoryEpochs: AuthEpochs = {
    read: (teamId) => Promise.resolve(stamps.get(teamId) ?? [null, '1']),
  };
  const authenticator = (epochs: AuthEpochs = memoryEpochs, ttlMs = TTL_MS) =>
    new KeyAuthenticator(api, epochs, { maxKeys: 100, ttlMs, now: () => clock });
  const authenticateCalls = () => call.mock.calls.length;

  beforeEach(() => {
    clock = 1_000_000;
    answers = new Map([['cvk_good', { caller: caller(), expires_at: '' }]]);
    stamps = new Map();
    call.mockClear();
  });

  /** A key's first use learns its team, the second is answered with its epochs read first: from then on, cached. */
  async function warm(keys: KeyAuthenticator, apiKey = 'cvk_good'): Promise<void> {
    await keys.authenticate(apiKey);
    await keys.authenticate(apiKey);
    call.mockClear();
  }

  it('serves a warm key from the cache without an Authenticate call', async () => {
    const keys = authenticator();
    await warm(keys);
    for (let i = 0; i < 5; i++) expect(await keys.authenticate('cvk_good')).toEqual(caller());
    expect(authenticateCalls()).toBe(0);
  });

  it("asks again once the key's team epoch or the global epoch moved, and refuses a key revoked meanwhile", async () => {
    const keys = authenticator();
    await warm(keys);
    stamps.set('team-1', ['1', '1']);
    answers.set('cvk_good', { caller: caller({ role: 'ADMIN' }), expires_at: '' });
    expect((await keys.authenticate('cvk_good'))?.role).toBe('ADMIN');
    expect(authenticateCalls()).toBe(1);

    stamps.set('team-1', ['1', '2']);
    answers.delete('cvk_good');
    await expect(keys.authenticate('cvk_good')).rejects.toMatchObject({ code: 'authentication_required' });
    await expect(keys.authenticate('cvk_good')).rejects.toMatchObject({ code: 'authentication_required' });
    expect(authenticateCalls()).toBe(3);
  });

  it('never caches a failure: every attempt with a bad key asks, and a key created meanwhile works at once', async () => {
    const keys = authenticator();
    for (let i = 0; i < 3; i++)
      await expect(keys.authenticate('cvk_new')).rejects.toMatchObject({ code: 'authentication_required' });
    answers.set('cvk_new', { caller: caller({ api_key_id: 'key-2' }), expires_at: '' });
    expect((await keys.authenticate('cvk_new'))?.api_key_id).toBe('key-2');
    expect(authenticateCalls()).toBe(4);
  });

  it('never caches a run-scoped key', async () => {
    answers.set('cvk_run', { caller: caller({ run_id: 'run-1' }), expires_at: '' });
    const keys = authenticator();
    for (let i = 0; i < 4; i++) expect((await keys.authenticate('cvk_run'))?.run_id).toBe('run-1');
    expect(authenticateCalls()).toBe(4);
  });

  it('refuses an expired key although it was cached', async () => {
    answers.set('cvk_good', { caller: caller(), expires_at: new Date(clock + 5_000).toISOString() });
    const keys = authenticator();
    await warm(keys);
    expect(await keys.authenticate('cvk_good')).toEqual(caller());
    expect(authenticateCalls()).toBe(0);
    clock += 5_000;
    answers.delete('cvk_good');
    await expect(keys.authenticate('cvk_good')).rejects.toMatchObject({ code: 'authentication_required' });
    expect(authenticateCalls()).toBe(1);
  });

  it('asks again once the TTL ran out', async () => {
    const keys = authenticator();
    await warm(keys);
    clock += TTL_MS - 1;
    await keys.authenticate('cvk_good');
    expect(authenticateCalls()).toBe(0);
    clock += 1;
    await keys.authenticate('cvk_good');
    expect(authenticateCalls()).toBe(1);
  });

  it('does not cache an answer for another team than the epochs it read', async () => {
    const keys = authenticator();
    await keys.authenticate('cvk_good');
    answers.set('cvk_good', { caller: caller({ team_id: 'team-2' }), expires_at: '' });
    await keys.authenticate('cvk_good');
    await keys.authenticate('cvk_good');
    expect(authenticateCalls()).toBe(3);
  });

  it('asks the orchestrator every time while Redis is down', async () => {
    // Nothing listens on port 1; without an offline queue every command fails at once, as in the gateway.
    const redis = new Redis({
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    try {
      const keys = authenticator(redisAuthEpochs(redis, authEpochKeys('test:auth-epoch'), 1_000));
      for (let i = 0; i < 4; i++) expect(await keys.authenticate('cvk_good')).toEqual(caller());
      expect(authenticateCalls()).toBe(4);
    } finally {
      redis.disconnect();
    }
  });

  it('asks the orchestrator when Redis does not answer in time', async () => {
    const silent = { mget: () => new Promise<(string | null)[]>(() => undefined) };
    const keys = authenticator(
      redisAuthEpochs(silent as unknown as Redis, authEpochKeys('test:auth-epoch'), 1),
    );
    for (let i = 0; i < 3; i++) expect(await keys.authenticate('cvk_good')).toEqual(caller());
    expect(authenticateCalls()).toBe(3);
  });

  it('asks the orchestrator while Redis holds no global epoch (no orchestrator keeps these epochs, or they were lost)', async () => {
    const empty = { mget: () => Promise.resolve([null, null]) };
    const keys = authenticator(
      redisAuthEpochs(empty as unknown as Redis, authEpochKeys('test:auth-epoch'), 1_000),
    );
    for (let i = 0; i < 3; i++) expect(await keys.authenticate('cvk_good')).toEqual(caller());
    expect(authenticateCalls()).toBe(3);
  });

  it('with a TTL of 0 is off: every request asks', async () => {
    const read = jest.fn(memoryEpochs.read);
    const keys = authenticator({ read }, 0);
    for (let i = 0; i < 3; i++) await keys.authenticate('cvk_good');
    expect(authenticateCalls()).toBe(3);
    expect(read).not.toHaveBeenCalled();
  });
});
