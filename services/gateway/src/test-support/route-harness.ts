import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type Router } from 'express';
import type { ProblemBody } from '@conveyor/errors';
import { createLogger } from '@conveyor/logger';
import type { Caller__Output } from '@conveyor/proto';
import { errorHandler, notFoundHandler, requestContext } from '@conveyor/runtime';
import type { OrchestratorApi } from '../orchestrator-api';

/** The authenticated caller every request of a route test carries (authentication has its own tests). */
export const CALLER = {
  team_id: 'team-1',
  principal_id: 'user-1',
  principal_type: 'USER',
} as unknown as Caller__Output;

export const PUBLIC_URL = 'http://gateway.test';

/** One orchestrator call as a route made it: service, method and the typed request. */
export type RecordedCall = [service: string, method: string, request: Record<string, unknown>];

export interface RouteHarness {
  /** The fake orchestrator port's `call`: set its answers, read what the routes asked. Reset before each test. */
  readonly call: jest.Mock;
  /** A request over the loopback socket; a body is sent as JSON. */
  send(method: string, path: string, body?: unknown): Promise<Response>;
  /** The one orchestrator call the request made (fails the test if there were more or none). */
  onlyCall(): RecordedCall;
}

/**
 * Route tests at the level of their rules: the public request becomes one orchestrator call with typed fields, the
 * answer becomes the contract's body, and an orchestrator error becomes its status and problem body. The
 * orchestrator is a fake port; the HTTP is real (express with the gateway's error handling, on a loopback socket).
 * Call it inside a `describe`: it registers the server's start and stop.
 */
export function routeHarness(routes: (api: OrchestratorApi) => Router): RouteHarness {
  const call = jest.fn();
  let server: Server;
  let base = '';

  beforeAll(async () => {
    const app = express();
    app.use(requestContext(createLogger({ service: 'test', level: 'silent' })));
    app.use(express.json());
    app.use((req, _res, next) => {
      req.caller = CALLER;
      next();
    });
    app.use(routes({ call } as unknown as OrchestratorApi));
    app.use(notFoundHandler);
    app.use(errorHandler());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => call.mockReset());

  return {
    call,
    send: (method, path, body) =>
      fetch(`${base}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      }),
    onlyCall: () => {
      expect(call).toHaveBeenCalledTimes(1);
      return call.mock.calls[0]!.slice(0, 3) as RecordedCall;
    },
  };
}

/** The problem body of an error answer, once its status and media type are checked. */
export async function problemOf(res: Response, status: number): Promise<ProblemBody> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await res.json()) as ProblemBody;
}
