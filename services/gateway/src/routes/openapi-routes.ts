import { z } from 'zod';
import { endpoint, json, type Endpoint } from './endpoint';
/** GET /v1/openapi.json: the document generated from the gateway's own schemas (`openapi/api-document.ts`); public, like any API reference. */
export const openapiEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/openapi.json',
    tag: 'Operations',
    summary: 'This document',
    success: json(z.record(z.unknown()), 'The OpenAPI 3.1 document of this API.'),
    auth: 'none',
    handle: ({ res, apiDocument }) => {
      res.json(apiDocument());
    },
  }),
];
