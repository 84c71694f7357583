import { Router, type Request } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toCloudEnvironment, toGuestJson, toInvitationJson } from '../mappers/catalog-resources';
import { parseBody, parseQuery } from '../validation';
import {
  createEnvironmentBody,
  invitationBody,
  listEnvironmentsQuery,
  updateEnvironmentBody,
} from '../schemas/resource-request-schemas';

/** Where a share token is redeemed, on this gateway under the same base path the request came in on. */
function linkUrl(req: Request, token: string): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}${req.baseUrl}/agent/environment-links/${token}`;
}

/** Environments (contract §1.3) and their management: guests by invitation (docs/guests.md) and link sharing (docs/catalog.md). */
export function environmentRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.get('/agent/environments', async (req, res) => {
    const query = parseQuery(listEnvironmentsQuery, req.query);
    const result = await api.call(
      'catalog',
      'ListEnvironments',
      { caller: callerOf(req), sort_by: query.sort_by ?? 'last_updated' },
      req.id,
    );
    res.json({ environments: result.environments.map(toCloudEnvironment) });
  });

  router.post('/agent/environments', async (req, res) => {
    const body = parseBody(createEnvironmentBody, req.body);
    const env = await api.call(
      'catalog',
      'CreateEnvironment',
      { caller: callerOf(req), environment_id: '', body_json: JSON.stringify(body) },
      req.id,
    );
    res.status(201).json(toCloudEnvironment(env));
  });

  router.get('/agent/environments/:uid', async (req, res) => {
    res.json(
      toCloudEnvironment(
        await api.call(
          'catalog',
          'GetEnvironment',
          { caller: callerOf(req), environment_id: req.params.uid! },
          req.id,
        ),
      ),
    );
  });

  router.put('/agent/environments/:uid', async (req, res) => {
    const body = parseBody(updateEnvironmentBody, req.body);
    const env = await api.call(
      'catalog',
      'UpdateEnvironment',
      { caller: callerOf(req), environment_id: req.params.uid!, body_json: JSON.stringify(body) },
      req.id,
    );
    res.json(toCloudEnvironment(env));
  });

  router.delete('/agent/environments/:uid', async (req, res) => {
    await api.call(
      'catalog',
      'DeleteEnvironment',
      { caller: callerOf(req), environment_id: req.params.uid! },
      req.id,
    );
    res.status(204).end();
  });

  router.get('/agent/environments/:uid/guests', async (req, res) => {
    const result = await api.call(
      'catalog',
      'ListEnvironmentGuests',
      { caller: callerOf(req), environment_id: req.params.uid! },
      req.id,
    );
    res.json({
      guests: result.guests.map(toGuestJson),
      invitations: result.invitations.map((i) => toInvitationJson(i)),
    });
  });

  // An invitation, never a grant: 202 with the same body whether or not an account has the e-mail (docs/guests.md).
  router.post('/agent/environments/:uid/guests', async (req, res) => {
    const body = parseBody(invitationBody, req.body);
    const invitation = await api.call(
      'catalog',
      'InviteEnvironmentGuest',
      { caller: callerOf(req), environment_id: req.params.uid!, email: body.email },
      req.id,
    );
    res.status(202).json(toInvitationJson(invitation));
  });

  router.delete('/agent/environments/:uid/guests/:userId', async (req, res) => {
    await api.call(
      'catalog',
      'RemoveEnvironmentGuest',
      { caller: callerOf(req), environment_id: req.params.uid!, user_id: req.params.userId! },
      req.id,
    );
    res.status(204).end();
  });

  router.post('/agent/environments/:uid/share-link', async (req, res) => {
    const link = await api.call(
      'catalog',
      'EnableEnvironmentLink',
      { caller: callerOf(req), environment_id: req.params.uid! },
      req.id,
    );
    res.json({ environment_id: link.environment_id, token: link.token, url: linkUrl(req, link.token) });
  });

  router.delete('/agent/environments/:uid/share-link', async (req, res) => {
    await api.call(
      'catalog',
      'DisableEnvironmentLink',
      { caller: callerOf(req), environment_id: req.params.uid! },
      req.id,
    );
    res.status(204).end();
  });

  // The invitee's side: its pending invitations, accepting one (it becomes a guest), declining one. A manager
  // withdraws an invitation with the same DELETE.
  router.get('/agent/environment-invitations', async (req, res) => {
    const result = await api.call('catalog', 'ListEnvironmentInvitations', { caller: callerOf(req) }, req.id);
    res.json({ invitations: result.invitations.map((i) => toInvitationJson(i, true)) });
  });

  router.post('/agent/environment-invitations/:invitationId/accept', async (req, res) => {
    res.json(
      toCloudEnvironment(
        await api.call(
          'catalog',
          'AcceptEnvironmentInvitation',
          { caller: callerOf(req), invitation_id: req.params.invitationId! },
          req.id,
        ),
      ),
    );
  });

  router.delete('/agent/environment-invitations/:invitationId', async (req, res) => {
    await api.call(
      'catalog',
      'DeleteEnvironmentInvitation',
      { caller: callerOf(req), invitation_id: req.params.invitationId! },
      req.id,
    );
    res.status(204).end();
  });

  // Redeeming records that the caller reached the environment by link; it then lists and runs like a guest's.
  router.post('/agent/environment-links/:token', async (req, res) => {
    res.json(
      toCloudEnvironment(
        await api.call(
          'catalog',
          'RedeemEnvironmentLink',
          { caller: callerOf(req), token: req.params.token! },
          req.id,
        ),
      ),
    );
  });

  return router;
}
