import RequestQueue from 'kafkajs/src/network/requestQueue';
import './request-queue-idle-fix';

const logger = {
  debug: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  info: () => undefined,
};

describe('kafkajs request queue without its idle timer loop', () => {
  it('arms no check when nothing is pending and the broker never throttled', () => {
    const queue = new RequestQueue({ logger, isConnected: () => true });
    queue.scheduleCheckPendingRequests();
    expect(queue.throttleCheckTimeoutId).toBeNull();
  });

  it('still schedules a check for a request that has to wait', () => {
    const queue = new RequestQueue({ logger, isConnected: () => true });
    queue.pending.push({});
    queue.scheduleCheckPendingRequests();
    expect(queue.throttleCheckTimeoutId).not.toBeNull();
    clearTimeout(queue.throttleCheckTimeoutId!);
  });
});
