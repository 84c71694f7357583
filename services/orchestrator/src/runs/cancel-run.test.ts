import { RUN_STATES } from '@conveyor/run-events';
import { cancelRefusal } from './cancel-run';

const cloudRun = { source: 'API', executionLocation: 'REMOTE', workerHost: null } as const;

describe('cancelRefusal', () => {
  it.each(['QUEUED', 'CLAIMED', 'INPROGRESS'] as const)('lets a %s cloud run be cancelled', (state) => {
    expect(cancelRefusal({ ...cloudRun, state })).toBeUndefined();
  });

  it('answers 409 (retryable) while the environment is being prepared', () => {
    expect(cancelRefusal({ ...cloudRun, state: 'PENDING' })).toMatchObject({ code: 'conflict' });
  });

  it.each(['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'] as const)(
    'answers 400 for a run that ended %s',
    (state) => {
      expect(cancelRefusal({ ...cloudRun, state })).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining(state),
      });
    },
  );

  it.each([
    ['a self-hosted worker', { ...cloudRun, workerHost: 'my-box' }],
    ['the local CLI', { ...cloudRun, source: 'LOCAL' }],
    ['a local execution', { ...cloudRun, executionLocation: 'LOCAL' }],
    ['a GitHub Action', { ...cloudRun, source: 'GITHUB_ACTION' }],
  ] as const)('answers 422 in every state for runs of %s', (_what, run) => {
    for (const state of RUN_STATES)
      expect(cancelRefusal({ ...run, state })).toMatchObject({ code: 'operation_not_supported' });
  });
});
