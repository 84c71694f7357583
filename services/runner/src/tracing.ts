import { startTracing } from '@conveyor/tracing';

// main.ts imports this first: the instrumentations patch http, gRPC, Redis, Kafka and pg before those load.
// The runner: its HTTP callers are probes and sandboxed agents, whose model requests are traced as the run's spans.
export const tracing = startTracing({ service: 'runner', untrustedCallers: true, incomingHttp: false });
