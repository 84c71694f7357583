import { z } from 'zod';
import { SECRET_NAME } from '@conveyor/environment-body';
import { githubAppBody, linearIntegrationBody, slackAppBody } from '@conveyor/integration-bodies';
import { zodMessages } from './zod-messages';

/**
 * An integration's registration body (the API's own schema, `@conveyor/integration-bodies`) and which of its fields
 * are credentials: a definition file names a team secret for each, never the value.
 */
export const INTEGRATION_KINDS = {
  github_app: { body: githubAppBody, credentials: ['private_key', 'webhook_secret'] },
  slack: { body: slackAppBody, credentials: ['bot_token', 'signing_secret'] },
  linear: { body: linearIntegrationBody, credentials: ['api_key', 'webhook_secret'] },
} as const;
export type IntegrationKind = keyof typeof INTEGRATION_KINDS;
const KINDS = Object.keys(INTEGRATION_KINDS) as [IntegrationKind, ...IntegrationKind[]];

export interface IntegrationDefinition {
  file: string;
  name: string;
  kind: IntegrationKind;
  /** The body's other fields, as the API takes them (checked with its schema). */
  settings: Record<string, unknown>;
  /** Credential field → the team secret holding it. */
  secretNames: Record<string, string>;
}

const secretReference = z
  .object({
    secretName: z
      .string()
      .regex(SECRET_NAME, 'must be a team secret name (letters, digits, _ . -; at most 128)'),
  })
  .strict();

/**
 * Parses one `integrations/<name>.yaml` (a mapping): `kind`, the body's fields, and each credential as
 * `{secretName: …}`. A credential written out is refused without repeating it: definition files are committed.
 */
export function parseIntegrationDefinition(
  file: string,
  name: string,
  value: Record<string, unknown>,
): { definition: IntegrationDefinition } | { errors: string[] } {
  const { kind, name: _name, description: _description, ...fields } = value;
  const parsedKind = z.enum(KINDS).safeParse(kind);
  if (!parsedKind.success) return { errors: [`kind must be one of ${KINDS.join(', ')}`] };
  const { body, credentials } = INTEGRATION_KINDS[parsedKind.data];
  const errors: string[] = [];
  const secretNames: Record<string, string> = {};
  for (const field of credentials) {
    const given = fields[field];
    delete fields[field];
    if (given === undefined) {
      errors.push(`${field} is required: {secretName: <the team secret holding it>}`);
    } else if (typeof given !== 'object' || given === null) {
      errors.push(
        `${field}: a secret written into a definition file is refused; store it as a team secret (PUT /v1/secrets/<name>) and give {secretName: <name>}`,
      );
    } else {
      const ref = secretReference.safeParse(given);
      if (ref.success) secretNames[field] = ref.data.secretName;
      else errors.push(...zodMessages(ref.error).map((m) => `${field}.${m}`));
    }
  }
  // The API's schema, less what the file does not carry: its name (the file's), its factory (the apply's) and the
  // credentials (team secrets, checked with their values when applied).
  const omitted = Object.fromEntries(['name', 'factory_id', ...credentials].map((c) => [c, true] as const));
  const settings = (body as z.AnyZodObject).omit(omitted).safeParse(fields);
  if (!settings.success) errors.push(...zodMessages(settings.error));
  if (errors.length > 0 || !settings.success) return { errors };
  return { definition: { file, name, kind: parsedKind.data, settings: settings.data, secretNames } };
}
