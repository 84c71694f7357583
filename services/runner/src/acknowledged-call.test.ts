import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import { AppError, fromGrpcError } from '@conveyor/errors';
import { createLogger } from '@conveyor/logger';
import { untilAcknowledged } from './acknowledged-call';

const log = createLogger({ service: 'runner-test', level: 'silent' });

/** A grpc-js failure as the runner's link receives it (no answer from the orchestrator, or its own typed error). */
const grpcFailure = (code: GrpcStatus, errorCode?: string) => {
  const metadata = new Metadata();
  if (errorCode) metadata.set('x-error-code', errorCode);
  return fromGrpcError(Object.assign(new Error(String(code)), { code, details: 'x', metadata }));
};

/** A clock that moves only when the policy sleeps, and an attempt that fails with each of `failures` in turn. */
function scripted(failures: unknown[]) {
  let clock = 0;
  const slept: number[] = [];
  let attempts = 0;
  const attempt = async () => {
    attempts++;
    const failure = failures.shift();
    if (failure) throw failure;
    return 'acknowledged';
  };
  const policy = {
    giveUpAfterMs: 60_000,
    now: () => clock,
    sleep: async (ms: number) => {
      slept.push(ms);
      clock += ms;
    },
  };
  return { attempt, policy, slept, attempts: () => attempts };
}

describe('untilAcknowledged', () => {
  it.each([
    ['UNAVAILABLE (the orchestrator is down or restarting)', grpcFailure(GrpcStatus.UNAVAILABLE)],
    [
      'DEADLINE_EXCEEDED (no answer in time; it may have committed)',
      grpcFailure(GrpcStatus.DEADLINE_EXCEEDED),
    ],
    [
      'the orchestrator’s own 503 (its database is away)',
      grpcFailure(GrpcStatus.UNAVAILABLE, 'resource_unavailable'),
    ],
    ['RESOURCE_EXHAUSTED', grpcFailure(GrpcStatus.RESOURCE_EXHAUSTED)],
  ])('retries %s with growing delays until the report is acknowledged', async (_, failure) => {
    const { attempt, policy, slept, attempts } = scripted([failure, failure, failure]);
    expect(await untilAcknowledged('run completion', attempt, policy, log)).toBe('acknowledged');
    expect(attempts()).toBe(4);
    expect(slept).toHaveLength(3);
    // Equal jitter: each delay is at least half its ceiling (250 ms, 500 ms, 1 s).
    slept.forEach((ms, i) => expect(ms).toBeGreaterThanOrEqual(125 * 2 ** i));
  });

  it.each([
    [
      'conflict (the run is no longer this runner’s)',
      new AppError('conflict', 'This runner no longer holds the run'),
    ],
    ['invalid_request', new AppError('invalid_request', 'event 0 is invalid')],
    ['internal_error', grpcFailure(GrpcStatus.INTERNAL)],
    ['a bug in the runner', new TypeError('x is undefined')],
  ])('sends once and throws %s', async (_, failure) => {
    const { attempt, policy, attempts } = scripted([failure]);
    await expect(untilAcknowledged('run completion', attempt, policy, log)).rejects.toBe(failure);
    expect(attempts()).toBe(1);
  });

  it('gives up with the last failure once the next attempt would start past its bound', async () => {
    const failures = Array.from({ length: 100 }, () => grpcFailure(GrpcStatus.UNAVAILABLE));
    const { attempt, policy, slept } = scripted(failures);
    await expect(
      untilAcknowledged('run completion', attempt, { ...policy, giveUpAfterMs: 30_000 }, log),
    ).rejects.toMatchObject({ code: 'resource_unavailable' });
    const waited = slept.reduce((a, b) => a + b, 0);
    expect(waited).toBeLessThanOrEqual(30_000);
    // Delays stop growing at 10 s, so the attempts went on until close to the bound.
    expect(waited).toBeGreaterThan(30_000 - 10_000);
    expect(Math.max(...slept)).toBeLessThanOrEqual(10_000);
  });
});
