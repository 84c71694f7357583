import { AppError } from '@conveyor/errors';
import { pinnedJsonRequest, type ProviderApi } from '../egress/pinned-json-request';

/**
 * Linear's GraphQL API, by hand rather than with `@linear/sdk`: the SDK is ESM-only (it loads neither in the
 * orchestrator's CommonJS Jest nor with its types under our module resolution) and calls through the global fetch,
 * outside the egress policy and timeouts every provider call here goes through. We need three operations.
 */
export interface LinearApi extends ProviderApi {
  /** `https://api.linear.app/graphql` (LINEAR_API_URL). */
  url: string;
}

/** Linear refused the key itself (revoked, wrong, expired): the integration is broken until registered again. */
export class LinearCredentialsRefused extends AppError {
  constructor(readonly linearReason: string) {
    super('external_authentication_required', `Linear refused the integration's key: ${linearReason}`);
  }
}

/**
 * Personal API keys are sent as they are, OAuth access tokens as `Bearer` (Linear's documented forms); Linear issues
 * OAuth tokens with the `lin_oauth_` prefix.
 */
export const authorizationOf = (key: string): string =>
  key.startsWith('lin_oauth_') ? `Bearer ${key}` : key;

type GraphQLError = { message?: unknown; extensions?: { code?: unknown; userPresentableMessage?: unknown } };

/** Linear's own words for a refusal, bounded. */
function reasonOf(errors: GraphQLError[], status: number): string {
  const parts = errors
    .map((e) => e.extensions?.userPresentableMessage ?? e.message)
    .filter((m): m is string => typeof m === 'string' && m.length > 0);
  return (parts.join('; ') || `HTTP ${status}`).slice(0, 500);
}

/**
 * One GraphQL operation with the key. A refused key (HTTP 401, or an `AUTHENTICATION_ERROR` in the answer) throws
 * LinearCredentialsRefused with Linear's reason; other errors are `resource_unavailable` (5xx, unreachable: retried)
 * or `invalid_request` (Linear refused the operation itself). The key is never part of an error.
 */
export async function linearRequest<T>(
  api: LinearApi,
  key: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  const { status, json } = await pinnedJsonRequest(
    api,
    'Linear API',
    'POST',
    new URL(api.url),
    { authorization: authorizationOf(key), accept: 'application/json' },
    { query, variables },
  );
  const answer = (json ?? {}) as { data?: T; errors?: GraphQLError[] };
  const errors = Array.isArray(answer.errors) ? answer.errors : [];
  if (status === 401 || errors.some((e) => e.extensions?.code === 'AUTHENTICATION_ERROR'))
    throw new LinearCredentialsRefused(reasonOf(errors, status));
  if (status >= 500 || status === 429 || status === 0)
    throw new AppError('resource_unavailable', `Linear API answered ${status}: ${reasonOf(errors, status)}`);
  if (status !== 200 || errors.length > 0 || answer.data === undefined)
    throw new AppError('invalid_request', `Linear refused the request: ${reasonOf(errors, status)}`);
  return answer.data;
}

export interface LinearViewer {
  id: string;
  name: string;
}

export async function viewer(api: LinearApi, key: string): Promise<LinearViewer> {
  const data = await linearRequest<{ viewer: LinearViewer }>(api, key, 'query Viewer { viewer { id name } }');
  return data.viewer;
}

export async function commentCreate(
  api: LinearApi,
  key: string,
  issueId: string,
  body: string,
): Promise<void> {
  const data = await linearRequest<{ commentCreate: { success: boolean } }>(
    api,
    key,
    'mutation CommentCreate($input: CommentCreateInput!) { commentCreate(input: $input) { success } }',
    { input: { issueId, body } },
  );
  if (!data.commentCreate.success)
    throw new AppError('resource_unavailable', 'Linear did not create the comment');
}

export async function issueUpdate(
  api: LinearApi,
  key: string,
  issueId: string,
  stateId: string,
): Promise<void> {
  const data = await linearRequest<{ issueUpdate: { success: boolean } }>(
    api,
    key,
    'mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { success } }',
    { id: issueId, input: { stateId } },
  );
  if (!data.issueUpdate.success)
    throw new AppError('resource_unavailable', 'Linear did not update the issue');
}
