import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { AppError, type ErrorCode, type ProblemBody } from '@conveyor/errors';
import { createLogger } from '@conveyor/logger';
import type { Caller__Output } from '@conveyor/proto';
import { errorHandler, notFoundHandler, requestContext } from '@conveyor/runtime';
import { jsonBodies } from '../middleware/json-bodies';
import type { OrchestratorApi } from '../orchestrator-api';
import type { Endpoint } from '../routes/endpoint';
import { endpointRouter } from '../routes/endpoint-router';

/** The authenticated caller every request of a route test carries (authentication has its own tests). */
export const CALLER = {
  team_id: 'team-1',
  principal_id: 'user-1',
  principal_type: 'USER',
} as unknown as Caller__Output;

export const PUBLIC_URL = 'http://gateway.test';
/** The gateway's default MAX_BODY_BYTES. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** One orchestrator call as a route made it: service, method and the typed request. */
export type RecordedCall = [service: string, method: string, request: Record<string, unknown>];

/** A request whose orchestrator call fails with `code`, and the HTTP status the gateway must answer. */
export type OrchestratorErrorCase = [
  code: ErrorCode,
  status: number,
  method: string,
  path: string,
  body?: unknown,
];

export interface RouteHarness {
  /** The fake orchestrator port's `call`: set its answers, read what the routes asked. Reset before each test. */
  readonly call: jest.Mock;
  /** A request over the loopback socket; a body is sent as JSON. */
  send(method: string, path: string, body?: unknown): Promise<Response>;
  /** The one orchestrator call the request made (fails the test if there were more or none). */
  onlyCall(): RecordedCall;
  /** One test per case: the orchestrator's AppError becomes its status and a problem body with its message. */
  itMapsOrchestratorErrors(cases: OrchestratorErrorCase[]): void;
}

/**
 * Route tests at the level of their rules: the public request becomes one orchestrator call with typed fields, the
 * answer becomes the contract's body, and an orchestrator error becomes its status and problem body. The
 * orchestrator is a fake port; the HTTP is real (express with the gateway's body parsing and error handling, on a
 * loopback socket).
 * Call it inside a `describe`: it registers the server's start and stop.
 */
export function routeHarness(endpoints: readonly Endpoint[], caller: Caller__Output = CALLER): RouteHarness {
  const call = jest.fn();
  let server: Server;
  let base = '';

  beforeAll(async () => {
    const app = express();
    app.use(requestContext(createLogger({ service: 'test', level: 'silent' })));
    app.use(jsonBodies(MAX_BODY_BYTES));
    app.use((req, _res, next) => {
      req.caller = caller;
      next();
    });
    app.use(
      endpointRouter(endpoints, {
        api: { call } as unknown as OrchestratorApi,
        publicUrl: () => PUBLIC_URL,
        githubWebUrl: 'https://github.com',
        apiDocument: () => ({}),
      }),
    );
    app.use(notFoundHandler);
    app.use(errorHandler());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => call.mockReset());

  const send = (method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  return {
    call,
    send,
    onlyCall: () => {
      expect(call).toHaveBeenCalledTimes(1);
      return call.mock.calls[0]!.slice(0, 3) as RecordedCall;
    },
    itMapsOrchestratorErrors: (cases) =>
      it.each(cases)(
        "answers the orchestrator's %s as %s on %s %s",
        // A rest parameter: jest would take a fifth parameter missing from a row for its `done` callback.
        async (...[code, status, method, path, body]: OrchestratorErrorCase) => {
          call.mockRejectedValueOnce(new AppError(code, `${code} from the orchestrator`));
          expect(await problemOf(await send(method, path, body), status)).toMatchObject({
            status,
            detail: `${code} from the orchestrator`,
          });
        },
      ),
  };
}

/** The problem body of an error answer, once its status and media type are checked. */
export async function problemOf(res: Response, status: number): Promise<ProblemBody> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await res.json()) as ProblemBody;
}

/** The paths of the fields a 400 answer names, once its status and media type are checked. */
export async function refusedPaths(res: Response): Promise<string[]> {
  const problem = await problemOf(res, 400);
  return (problem.errors as Array<{ path: string }>).map((e) => e.path);
}
