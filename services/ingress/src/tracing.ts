import { startTracing } from '@conveyor/tracing';

// main.ts imports this first: the instrumentations patch http, gRPC, Redis, Kafka and pg before those load.
// The ingress: the webhook edge: a sender's trace context is not continued.
export const tracing = startTracing({ service: 'ingress', untrustedCallers: true });
