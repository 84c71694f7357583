import RequestQueue from 'kafkajs/src/network/requestQueue';

/**
 * kafkajs 2.2.4 (its last release) re-arms a timer every millisecond on every broker connection while nothing waits
 * to be sent: after each check it schedules the next one at `throttledUntil - now`, negative when the broker never
 * throttled (tulios/kafkajs#1556; the fix, #1667, was never released). An idle orchestrator spent ~20 ms of CPU a
 * second there. With nothing pending and no throttle there is nothing to check: a request that has to wait is
 * pushed to `pending`, which schedules its own check, and a finished request checks the queue itself. Patched here
 * (by hand, on the pinned version) because no maintained release carries the fix.
 */
const schedule = RequestQueue.prototype.scheduleCheckPendingRequests;
RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleWhenNeeded(this: RequestQueue) {
  if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
  schedule.call(this);
};
