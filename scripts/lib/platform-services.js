// The services `npm start` runs (scripts/start.sh), under scripts/lib/supervisor.js. Settings come from the
// environment start.sh exports: ROOT, CONVEYOR_DATA_DIR, the ports and RUN_SANDBOX.
const fs = require('node:fs');
const path = require('node:path');
const { parseEnv } = require('node:util');
const { supervise } = require('./supervisor');

const env = process.env;
const root = env.ROOT;
const data = env.CONVEYOR_DATA_DIR;
const ports = {
  gateway: env.GATEWAY_PORT,
  ingress: env.INGRESS_PORT,
  orchestratorHttp: env.ORCH_HTTP_PORT,
  orchestratorGrpc: env.ORCH_GRPC_PORT,
  workerGrpc: env.WORKER_GRPC_PORT,
  runnerHttp: env.RUNNER_HTTP_PORT,
};
const orchestratorAddr = `127.0.0.1:${ports.orchestratorGrpc}`;

// Provider keys in start.sh's shell become dev team secrets (seed-dev) and nothing else: no service inherits them.
const base = { ...env };
for (const name of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY']) delete base[name];

// Only the orchestrator holds the installation keys; every service gets its own certificate.
const keys = parseEnv(fs.readFileSync(path.join(data, 'keys.env'), 'utf8'));
const tls = (service) => ({
  GRPC_TLS_CA_FILE: path.join(data, 'pki/ca.pem'),
  GRPC_TLS_CERT_FILE: path.join(data, `pki/${service}.pem`),
  GRPC_TLS_KEY_FILE: path.join(data, `pki/${service}-key.pem`),
});
const readyz = (port) => `http://127.0.0.1:${port}/readyz`;

supervise(
  [
    {
      name: 'orchestrator',
      entry: path.join(root, 'services/orchestrator/dist/main.js'),
      env: {
        ...base,
        ...keys,
        ...tls('orchestrator'),
        HTTP_PORT: ports.orchestratorHttp,
        GRPC_PORT: ports.orchestratorGrpc,
        WORKER_GRPC_PORT: ports.workerGrpc,
        PUBLIC_API_BASE_URL: `http://127.0.0.1:${ports.gateway}/v1`,
        WEBHOOK_BASE_URL: `http://127.0.0.1:${ports.ingress}`,
      },
      readyUrl: readyz(ports.orchestratorHttp),
      awaitReady: true,
    },
    {
      name: 'gateway',
      entry: path.join(root, 'services/gateway/dist/main.js'),
      env: { ...base, ...tls('gateway'), PORT: ports.gateway, ORCHESTRATOR_ADDR: orchestratorAddr },
    },
    {
      name: 'ingress',
      entry: path.join(root, 'services/ingress/dist/main.js'),
      env: { ...base, ...tls('ingress'), PORT: ports.ingress, ORCHESTRATOR_ADDR: orchestratorAddr },
    },
    {
      name: 'runner',
      entry: path.join(root, 'services/runner/dist/main.js'),
      env: {
        ...base,
        ...tls('runner'),
        HTTP_PORT: ports.runnerHttp,
        ORCHESTRATOR_ADDR: orchestratorAddr,
        WORKSPACE_ROOT: path.join(data, 'workspaces'),
        RUN_SANDBOX: env.RUN_SANDBOX || 'bubblewrap',
      },
    },
  ],
  { logDir: path.join(data, 'logs'), runDir: path.join(data, 'run') },
);
