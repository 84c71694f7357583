import Ajv, { type ErrorObject } from 'ajv';
import { kubeconformErrors, type KubeObject } from './deploy-tools';

/** Errors of one manifest against the Kubernetes API schema of its apiVersion/kind (kubeconform, strict). */
export function kubernetesSchemaErrors(obj: KubeObject): string[] {
  return kubeconformErrors([obj]).get(`${obj.kind}/${obj.metadata.name}`) ?? [];
}

/** Environment variables that carry credentials: they must come from a Secret, never a literal in the manifests. */
export const SECRET_ENV = [
  'DATABASE_URL',
  'REDIS_URL',
  'KAFKA_BROKERS',
  'CONVEYOR_SECRETS_KEY',
  'BLOB_SIGNING_SECRET',
];

const container = {
  type: 'object',
  required: ['name', 'image', 'resources', 'securityContext'],
  properties: {
    image: {
      type: 'string',
      // An explicit tag or digest, never :latest.
      pattern: '^[^\\s]+(:[\\w][\\w.-]{0,127}|@sha256:[a-f0-9]{64})$',
      not: { pattern: ':latest$' },
    },
    resources: {
      type: 'object',
      required: ['requests', 'limits'],
      properties: {
        requests: { type: 'object', required: ['cpu', 'memory'] },
        limits: { type: 'object', required: ['cpu', 'memory'] },
      },
    },
    securityContext: {
      type: 'object',
      required: ['allowPrivilegeEscalation', 'readOnlyRootFilesystem', 'capabilities'],
      properties: {
        allowPrivilegeEscalation: { const: false },
        readOnlyRootFilesystem: { const: true },
        capabilities: {
          type: 'object',
          required: ['drop'],
          properties: { drop: { type: 'array', contains: { const: 'ALL' } } },
        },
      },
    },
    env: {
      type: 'array',
      items: {
        if: { type: 'object', required: ['name'], properties: { name: { enum: SECRET_ENV } } },
        then: {
          required: ['valueFrom'],
          not: { required: ['value'] },
          properties: { valueFrom: { type: 'object', required: ['secretKeyRef'] } },
        },
      },
    },
  },
};

const probe = (...paths: string[]) => ({
  type: 'object',
  required: ['httpGet'],
  properties: {
    httpGet: { type: 'object', required: ['path', 'port'], properties: { path: { enum: paths } } },
  },
});

const podSpec = (serving: boolean) => ({
  type: 'object',
  required: ['containers', 'securityContext'],
  properties: {
    automountServiceAccountToken: { const: false },
    securityContext: {
      type: 'object',
      required: ['runAsNonRoot', 'seccompProfile'],
      properties: { runAsNonRoot: { const: true }, runAsUser: { type: 'integer', minimum: 1 } },
    },
    containers: {
      type: 'array',
      minItems: 1,
      items: serving
        ? {
            allOf: [
              container,
              {
                required: ['readinessProbe', 'livenessProbe'],
                properties: {
                  readinessProbe: probe('/readyz', '/readyz/local'),
                  livenessProbe: probe('/healthz'),
                },
              },
            ],
          }
        : container,
    },
  },
});

/** Our own rules for every workload, on top of the API schema. */
const policySchemas: Record<string, object> = {
  Deployment: {
    type: 'object',
    required: ['spec'],
    properties: {
      spec: {
        type: 'object',
        required: ['selector', 'template'],
        properties: { template: { type: 'object', required: ['spec'], properties: { spec: podSpec(true) } } },
      },
    },
  },
  Job: {
    type: 'object',
    required: ['spec'],
    properties: {
      spec: {
        type: 'object',
        required: ['template', 'backoffLimit'],
        properties: {
          template: { type: 'object', required: ['spec'], properties: { spec: podSpec(false) } },
        },
      },
    },
  },
  // A run's sandbox Pod (services/runner/src/sandbox/kubernetes/kubernetes-objects.ts), held to the same rules as ours.
  Pod: { type: 'object', required: ['spec'], properties: { spec: podSpec(false) } },
  // Secrets are provided by the operator (deploy/README.md), never committed.
  Secret: { not: {} },
};

// Strict about unknown keywords; the policy schemas are partial on purpose (required without listing every property).
const ajv = new Ajv({ allErrors: true, strictSchema: true, strictRequired: false, strictTypes: false });
const policies = Object.fromEntries(
  Object.entries(policySchemas).map(([kind, schema]) => [kind, ajv.compile(schema)]),
);

function format(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? [])
    .filter((e) => e.keyword !== 'if' && e.keyword !== 'allOf')
    .map(
      (e) =>
        `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.keyword === 'const' ? ` (${JSON.stringify(e.params.allowedValue)})` : ''}`,
    );
}

/** Errors against our deployment policy (resources, probes, non-root, secrets from Secrets); [] when compliant. */
export function policyErrors(obj: KubeObject): string[] {
  const validate = policies[obj.kind];
  if (!validate) return [];
  if (obj.kind === 'Secret')
    return ['Secret objects must not be committed: reference the Secret the operator creates'];
  return validate(obj) ? [] : format(validate.errors);
}

/** Both checks, each error prefixed with the object it belongs to. */
export function manifestErrors(objects: KubeObject[]): string[] {
  const schemaErrors = kubeconformErrors(objects);
  return objects.flatMap((obj) => {
    const id = `${obj.kind}/${obj.metadata.name}`;
    return [...(schemaErrors.get(id) ?? []), ...policyErrors(obj)].map((message) => `${id}: ${message}`);
  });
}
