import type { Prisma, PrismaClient, Webhook } from '@conveyor/db';
import type { Caller } from '../../auth/caller';
import type { GitHubApi } from '../../github/github-rest';
import type { SlackApiConfig } from '../../integrations/slack/slack-api';
import type { LinearApi } from '../../linear/linear-graphql';
import type { SecretCipher } from '../../secrets/secret-cipher';

/** The providers an integration's credentials are checked with before anything is stored (as registering does). */
export interface IntegrationProviders {
  github: GitHubApi;
  slack: SlackApiConfig;
  linear: LinearApi;
}

/** What an adapter may use: the caller's view (for its own checks) and the providers. */
export interface AdapterContext {
  db: PrismaClient;
  caller: Caller;
  providers: IntegrationProviders;
}

/** The body the API's schema accepted, credentials filled in from the team's secrets. */
export type Body = Record<string, unknown> & { name: string; factory_id: string };

/** The columns every integration row has, written by the generic apply. */
export interface NewRowColumns {
  id: string;
  teamId: string;
  name: string;
  webhookId: string;
  definedAsCode: true;
  createdById: string | null;
}

/** Credentials the provider just accepted mend a broken integration. */
export interface Mended {
  status: 'active';
  brokenReason: null;
}

/**
 * One kind of integration as code: how its file's body becomes its row. The generic apply
 * (`apply-integrations.ts`) does the rest the same way for every kind: ownership, the per-team limit, the
 * integration's webhook, created/updated/unchanged. `credential` is the field the provider checks; a change to it
 * (or whatever `recheck` says) asks the provider again, otherwise `known` gives what the provider said last time.
 */
export interface IntegrationAdapter<
  Input,
  Row extends { id: string; definedAsCode: boolean; webhook: Webhook },
  Facts,
  Fields,
  Columns,
> {
  /** How errors name the kind ("a GitHub App named …"). */
  label: string;
  idPrefix: string;
  credential: string;
  webhook: { prefix: string; scheme: string; secretField: string };
  /** The registration's own rules (the API's schema already passed); throws an AppError the caller can fix. */
  parse(ctx: AdapterContext, body: Body): Input | Promise<Input>;
  find(tx: Prisma.TransactionClient, teamId: string, name: string): Promise<Row | null>;
  count(tx: Prisma.TransactionClient, teamId: string): Promise<number>;
  storedCredential(cipher: SecretCipher, row: Row): string;
  encrypt(cipher: SecretCipher, id: string, credential: string): Columns;
  recheck?(row: Row, input: Input): boolean;
  /** Asks the provider; a refusal is an AppError (not resource_unavailable) naming the field and the reason. */
  verify(ctx: AdapterContext, input: Input): Promise<Facts>;
  known(row: Row): Facts;
  fields(input: Input, facts: Facts): Fields;
  /** The API's field name → [stored, wanted], for the fields an update may change (credentials aside). */
  compare(row: Row, fields: Fields): Record<string, [unknown, unknown]>;
  create(tx: Prisma.TransactionClient, data: NewRowColumns & Fields & Columns): Promise<unknown>;
  update(
    tx: Prisma.TransactionClient,
    id: string,
    data: Fields & Partial<Columns> & Partial<Mended>,
  ): Promise<unknown>;
}
