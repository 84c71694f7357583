import type { Request, Response } from 'express';
import type { RouteParameters } from 'express-serve-static-core';
import type { AnyZodObject, ZodTypeAny, z } from 'zod';
import type { OrchestratorApi } from '../orchestrator-api';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** How a successful answer looks: a JSON body, no body (204), a redirect (302) or raw bytes. */
export type Success =
  | { status: 200 | 201 | 202; schema: ZodTypeAny; description: string }
  | { status: 204; description: string }
  | {
      status: 302;
      description: string;
      /** What it answers instead to a client that accepts JSON rather than HTML (a browser follows the redirect). */
      json?: { status: 201; schema: ZodTypeAny; description: string };
    }
  | { status: 200; contentType: string; description: string };

export const json = (schema: ZodTypeAny, description: string, status: 200 | 201 | 202 = 200): Success => ({
  status,
  schema,
  description,
});
export const noContent: Success = { status: 204, description: 'Done; no body.' };

/**
 * Who may call an endpoint, which also places it in the middleware chain (app.ts): `none` before API keys are
 * read, `optional` after (public unless the resource is private), `api_key` after `requireAuth` and body parsing.
 */
export type Auth = 'api_key' | 'optional' | 'none';

/** What every handler may use besides its request: the gateway's one way to the domain, and where it is reached. */
export interface EndpointDeps {
  api: OrchestratorApi;
  /** Where users reach this gateway (links in responses); read per request since the port is known after listen. */
  publicUrl: () => string;
  /** GitHub's web pages (GITHUB_WEB_URL), where a browser creates a GitHub App from its manifest. */
  githubWebUrl: string;
  /** The OpenAPI document (built by the app, which the routes never import). */
  apiDocument: () => Record<string, unknown>;
}

export interface HandlerContext<P extends string, B, Q> extends EndpointDeps {
  req: Request<RouteParameters<P>>;
  res: Response;
  /** The body parsed with the endpoint's `body` schema (undefined without one). */
  body: B;
  /** The query parsed with the endpoint's `query` schema, or read by its `readQuery` (undefined without either). */
  query: Q;
}

/** What the OpenAPI document and the response validator read of an endpoint. */
export interface OperationSpec {
  method: HttpMethod;
  summary: string;
  tag: string;
  auth: Auth;
  query?: AnyZodObject;
  body?: ZodTypeAny;
  success: Success;
  /** Statuses this operation answers besides the common ones (problem+json). */
  errors?: number[];
  /** Its 503 body when that is not a problem (readiness reports its checks either way). */
  unavailable?: ZodTypeAny;
}

/**
 * One endpoint of the public API under /v1, in one place: method, path (express's form, relative to /v1), who may
 * call it, its request and response schemas and its handler. The router (`endpoint-router.ts`) and the OpenAPI
 * document (`openapi/operations.ts`) are both built by iterating the table of them (`endpoints.ts`).
 */
export interface Endpoint<P extends string = string, B = unknown, Q = unknown> extends OperationSpec {
  path: P;
  /** A run-scoped key (handed to code inside a run's sandbox, docs/sandbox.md) may call it; no other endpoint. */
  runScopedKey?: boolean;
  /** Reads the raw query itself where one zod object cannot (GET /agent/runs: `metadata[<key>]` pairs). */
  readQuery?: (raw: Record<string, unknown>) => Q;
  // Method syntax: a handler of a narrower context still fits the table's `Endpoint` (bivariant parameter).
  handle(ctx: HandlerContext<P, B, Q>): Promise<void> | void;
}

/** Declares an endpoint, inferring its path parameters, body and query types for the handler. */
export function endpoint<
  P extends string,
  BS extends ZodTypeAny | undefined = undefined,
  QS extends AnyZodObject | undefined = undefined,
  R = QS extends AnyZodObject ? z.infer<QS> : undefined,
>(
  e: Omit<Endpoint<P, BS extends ZodTypeAny ? z.infer<BS> : undefined, R>, 'body' | 'query' | 'auth'> & {
    body?: BS;
    query?: QS;
    /** Default `api_key`. */
    auth?: Auth;
  },
): Endpoint {
  // The table holds endpoints of every path and body type; each handler was checked against its own above.
  return { auth: 'api_key', ...e } as unknown as Endpoint;
}
