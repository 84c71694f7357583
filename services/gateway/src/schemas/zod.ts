import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// `.openapi('Name')` makes a schema a named component of the API document, referenced with `$ref` wherever it is
// used. Schema files take `z` from here so the extension is in place before their first `.openapi` call.
extendZodWithOpenApi(z);

export { z };
