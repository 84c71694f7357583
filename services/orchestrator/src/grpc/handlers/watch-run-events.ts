import { once } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import type { PrismaClient } from '@conveyor/db';
import { asAppError, toGrpcError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { RunEventMessage, WatchRunEventsRequest__Output } from '@conveyor/proto';
import { requireCaller } from '../require-caller';
import { findRunForCaller } from '../../runs/run-access';
import type { RunEventFeed } from '../../runs/run-event-feed';

const PAGE = 500;

type Call = grpc.ServerWritableStream<WatchRunEventsRequest__Output, RunEventMessage>;

/**
 * WatchRunEvents: the run's log after `after_sequence`, then every event as the feed announces it. One reader
 * per call pumps "everything above the last sequence sent", so wake-ups can be coalesced or spurious without
 * gaps or duplicates, and gRPC flow control (write() returning false) slows the reader instead of buffering.
 * Events of a run are written under its row lock (reportEvents, transitions, follow-ups), so they commit in
 * sequence order and "above the last one sent" never skips a late commit.
 */
export function watchRunEvents(deps: {
  db: PrismaClient;
  feed: RunEventFeed;
  logger: Logger;
}): grpc.handleServerStreamingCall<WatchRunEventsRequest__Output, RunEventMessage> {
  return (call: Call) => {
    let closed = false;
    let unsubscribe = () => {};
    const close = () => {
      closed = true;
      unsubscribe();
    };
    call.on('cancelled', close);
    call.on('close', close);
    call.on('error', close);

    let last = BigInt(call.request.after_sequence || 0);
    let pumping = false;
    let again = false;
    const pump = async (runId: string) => {
      if (pumping) {
        again = true;
        return;
      }
      pumping = true;
      try {
        do {
          again = false;
          for (;;) {
            const events = await deps.db.runEvent.findMany({
              where: { runId, id: { gt: last } },
              orderBy: { id: 'asc' },
              take: PAGE,
            });
            for (const e of events) {
              if (closed) return;
              last = e.id;
              const ok = call.write({
                sequence: String(e.id),
                kind: e.kind,
                created_at: e.createdAt.toISOString(),
                execution: e.execution,
                data_json: JSON.stringify(e.data ?? {}),
              });
              if (!ok) await Promise.race([once(call, 'drain'), once(call, 'close')]);
            }
            if (events.length < PAGE) break;
          }
        } while (again && !closed);
      } finally {
        pumping = false;
      }
    };

    const fail = (err: unknown) => {
      if (closed) return;
      const appError = asAppError(err);
      if (appError.code === 'internal_error')
        deps.logger.error({ err, method: 'WatchRunEvents' }, 'gRPC stream failed');
      close();
      call.emit('error', toGrpcError(appError));
    };

    void (async () => {
      const run = await findRunForCaller(deps.db, requireCaller(call.request.caller), call.request.run_id);
      if (closed) return;
      // Subscribe before the first read, so nothing recorded in between is missed.
      unsubscribe = deps.feed.subscribe(run.id, {
        wake: () => void pump(run.id).catch(fail),
        end: () => {
          close();
          call.end();
        },
      });
      await pump(run.id);
    })().catch(fail);
  };
}
