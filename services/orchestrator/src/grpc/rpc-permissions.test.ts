import type * as grpc from '@grpc/grpc-js';
import { loadOrchestratorProto, ORCHESTRATOR_SERVICES } from '@conveyor/proto';
import { allowedPeers, RPC_PERMISSIONS } from './rpc-permissions';

const services = Object.entries(ORCHESTRATOR_SERVICES) as Array<
  [keyof typeof ORCHESTRATOR_SERVICES, (typeof ORCHESTRATOR_SERVICES)[keyof typeof ORCHESTRATOR_SERVICES]]
>;
const methodsOf = (name: (typeof ORCHESTRATOR_SERVICES)[keyof typeof ORCHESTRATOR_SERVICES]) =>
  Object.keys((loadOrchestratorProto()[name] as unknown as grpc.ServiceClientConstructor).service);

describe('RPC permission table', () => {
  it('has an entry naming at least one peer for every RPC of every proto service', () => {
    const missing = services.flatMap(([key, name]) =>
      methodsOf(name)
        .filter((method) => allowedPeers(key, method).length === 0)
        .map((m) => `${name}.${m}`),
    );
    expect(missing).toEqual([]);
  });

  it('lists no RPC the protos do not have', () => {
    const stale = services.flatMap(([key, name]) =>
      Object.keys(RPC_PERMISSIONS[key])
        .filter((m) => !methodsOf(name).includes(m))
        .map((m) => `${name}.${m}`),
    );
    expect(stale).toEqual([]);
  });

  it('refuses everyone an RPC it does not list (fail closed)', () => {
    expect(allowedPeers('runs', 'NotInTheTable')).toEqual([]);
    expect(allowedPeers('runs', 'toString')).toEqual([]);
  });

  it('believes Caller messages from the gateway alone; ResolveWebhook is the ingress’s; runner RPCs are runners’ and workers’', () => {
    for (const [key, name] of services) {
      for (const method of methodsOf(name)) {
        const peers = allowedPeers(key, method);
        if (key === 'webhookIngress') expect(peers).toEqual(['ingress']);
        else if (key === 'runner') expect(peers.every((p) => p === 'runner' || p === 'worker')).toBe(true);
        else if (key === 'health') expect(peers).not.toContain('worker');
        else if (`${key}.${method}` !== 'workers.Connect') expect(peers).toEqual(['gateway']);
      }
    }
    expect(allowedPeers('runner', 'ClaimRun')).toEqual(['runner']);
    expect(allowedPeers('workers', 'Connect')).toEqual(['worker']);
  });

  it("keeps run leases to pool runners: a team's self-hosted worker cannot read or take over another run's record", () => {
    for (const method of ['SaveRunLease', 'ReleaseRunLease', 'AdoptRuns'])
      expect(allowedPeers('runner', method)).toEqual(['runner']);
  });

  it("keeps the runs' states to pool runners: a worker cannot probe which run IDs exist", () => {
    expect(allowedPeers('runner', 'GetRunStates')).toEqual(['runner']);
  });
});
