import type { Run } from '@conveyor/db';
import { runView } from '../../runs/run-view';
import { runPageToProto, runToProto } from './run-to-proto';

const row = {
  id: '6f1c2a4e-0000-4000-8000-000000000001',
  teamId: 'team-1',
  state: 'INPROGRESS',
  source: 'API',
  executionLocation: 'CLOUD',
  workerHost: null,
  createdAt: new Date('2026-11-25T10:00:00Z'),
  endedAt: null,
  scheduleId: null,
  statusMessage: null,
} as unknown as Run;

describe('runs on the wire', () => {
  it('a page with more to come carries its cursor; the last page says so with an empty one', () => {
    const view = runView(row);
    expect(runPageToProto({ runs: [view], nextCursor: 'c1' })).toMatchObject({
      has_next_page: true,
      next_cursor: 'c1',
    });
    expect(runPageToProto({ runs: [view] })).toMatchObject({ has_next_page: false, next_cursor: '' });
  });

  it('absent timestamps are empty strings and the derived facts come from the view', () => {
    expect(runToProto(runView(row))).toMatchObject({
      created_at: '2026-11-25T10:00:00.000Z',
      ended_at: '',
      is_sandbox_running: true,
      is_run_type_cancellable: true,
      schedule: undefined,
      status_message: undefined,
    });
  });
});
