import { Router } from 'express';
import { status, type ServiceError } from '@grpc/grpc-js';
import { z } from 'zod';
import { fromGrpcError } from '@conveyor/errors';
import type { RunEventMessage__Output } from '@conveyor/proto';
import { callerOf } from '../middleware/authenticate';
import type { OrchestratorApi } from '../orchestrator-api';
import { parseQuery } from '../validation';

/** Comment lines keep idle connections open through proxies that close silent ones. */
const KEEPALIVE_MS = 15_000;
const sequence = z.string().regex(/^\d{1,19}$/, 'must be an event sequence number');
const streamQuery = z.object({ after: sequence.optional() });

const frame = (e: RunEventMessage__Output) =>
  `id: ${e.sequence}\nevent: run_event\ndata: ${JSON.stringify({ sequence: Number(e.sequence), kind: e.kind, created_at: e.created_at, execution: e.execution, data: JSON.parse(e.data_json || '{}') as unknown })}\n\n`;

/**
 * GET /agent/runs/:runId/events: the run's events as Server-Sent Events, relayed from the orchestrator's
 * WatchRunEvents stream. `id:` is the event's sequence, so a reconnecting EventSource's Last-Event-ID resumes
 * exactly after the last event it received. A slow browser pauses the gRPC stream (its flow control reaches the
 * orchestrator's reader) rather than buffering here.
 */
export function runEventStreamRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.get('/agent/runs/:runId/events', async (req, res) => {
    const caller = callerOf(req);
    const runId = String(req.params.runId);
    const lastEventId = req.header('last-event-id');
    const after =
      lastEventId !== undefined
        ? parseQuery(streamQuery, { after: lastEventId }).after
        : parseQuery(streamQuery, req.query).after;
    // Unknown and other teams' runs answer the API's 404 before any stream starts.
    await api.call('runs', 'GetRun', { caller, run_id: runId }, req.id);

    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    const stream = api.watchRunEvents({ caller, run_id: runId, after_sequence: after ?? '0' }, req.id);
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    const finish = () => {
      clearInterval(keepalive);
      stream.cancel();
      res.end();
    };
    stream.on('data', (event: RunEventMessage__Output) => {
      if (!res.write(frame(event))) stream.pause();
    });
    res.on('drain', () => stream.resume());
    stream.on('error', (err: ServiceError) => {
      if (err.code !== status.CANCELLED) {
        const appError = fromGrpcError(err);
        req.log.warn({ err: appError.message, runId }, 'run event stream failed');
        res.write(
          `event: stream_error\ndata: ${JSON.stringify({ code: appError.code, detail: appError.message })}\n\n`,
        );
      }
      finish();
    });
    stream.on('end', finish);
    req.on('close', finish);
  });

  return router;
}
