import { startTracing } from '@conveyor/tracing';

// main.ts imports this first: the instrumentations patch http, gRPC, Redis, Kafka and pg before those load.
// The gateway: the public API: a caller's trace context is not continued.
export const tracing = startTracing({ service: 'gateway', untrustedCallers: true });
