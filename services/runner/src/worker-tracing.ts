import { startTracing } from '@conveyor/tracing';

// worker-main.ts imports this first, like the runner's main.ts its tracing.ts: the same instrumentations and spans,
// under a service name of its own. Its executions continue the trace their assignment carries (docs/observability.md).
export const tracing = startTracing({ service: 'worker', untrustedCallers: true, incomingHttp: false });
