import type { IncomingMessage } from 'node:http';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InjectOnlyPropagator } from './edge-propagator';
import { REDACTED_QUERY_PARAMS, redactedUrlAttributes } from './url-redaction';

export interface SdkOptions {
  serviceName: string;
  injectOnly: boolean;
  ignoreIncoming(req: IncomingMessage): boolean;
}

/**
 * The SDK with the instrumentations of the libraries the services use. Traces only: metrics stay Prometheus
 * (@conveyor/metrics) and logs stay pino, so the SDK's OTLP metric and log defaults are switched off. Redis and
 * PostgreSQL calls are recorded only inside a trace: BullMQ's and the background loops' polling would otherwise be a
 * stream of one-span traces, and most of the cost.
 */
export function startSdk(options: SdkOptions): NodeSDK {
  const w3c = new W3CTraceContextPropagator();
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    textMapPropagator: options.injectOnly ? new InjectOnlyPropagator(w3c) : w3c,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // Credentials in URLs (url-redaction.ts) are redacted before a span is made, on both sides.
      new HttpInstrumentation({
        ignoreIncomingRequestHook: options.ignoreIncoming,
        redactedQueryParamsServer: REDACTED_QUERY_PARAMS,
        redactedQueryParams: REDACTED_QUERY_PARAMS,
      }),
      // Routers and handlers only: a span per middleware would multiply a request's spans (and their cost) by ten.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new GrpcInstrumentation(),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new KafkaJsInstrumentation(),
      // No span per pool checkout (pg-pool.connect): a query's span has the caller's span as its parent either way.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new UndiciInstrumentation({ requireParentforSpans: true, startSpanHook: redactedUrlAttributes }),
    ],
  });
  sdk.start();
  return sdk;
}
