import { startTracing } from '@conveyor/tracing';

// main.ts imports this first: the instrumentations patch http, gRPC, Redis, Kafka and pg before those load.
// The orchestrator: its callers are the platform's own services (mutual TLS).
export const tracing = startTracing({ service: 'orchestrator' });
