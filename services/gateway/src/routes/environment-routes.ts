import * as r from '../schemas/resource-schemas';
import type { Request } from 'express';
import { callerOf } from '../middleware/authenticate';
import { toCloudEnvironment, toGuestJson, toInvitationJson } from '../mappers/catalog-resources';
import {
  createEnvironmentBody,
  invitationBody,
  listEnvironmentsQuery,
  updateEnvironmentBody,
} from '../schemas/resource-request-schemas';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

/** Where a share token is redeemed, on this gateway under the same base path the request came in on. */
function linkUrl(req: Request, token: string): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}${req.baseUrl}/agent/environment-links/${token}`;
}

/** Environments (contract §1.3) and their management: guests by invitation (docs/guests.md) and link sharing (docs/catalog.md). */
export const environmentEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/agent/environments',
    tag: 'Environments',
    summary: 'List environments',
    success: json(r.environmentListResponseSchema, 'Environments the caller can use.'),
    query: listEnvironmentsQuery,
    handle: async ({ req, res, query, api }) => {
      const result = await api.call(
        'catalog',
        'ListEnvironments',
        { caller: callerOf(req), sort_by: query.sort_by ?? 'last_updated' },
        req.id,
      );
      res.json({ environments: result.environments.map(toCloudEnvironment) });
    },
  }),

  endpoint({
    method: 'post',
    path: '/agent/environments',
    tag: 'Environments',
    summary: 'Create an environment',
    success: json(r.cloudEnvironmentSchema, 'Created.', 201),
    body: createEnvironmentBody,
    handle: async ({ req, res, body, api }) => {
      const env = await api.call(
        'catalog',
        'CreateEnvironment',
        { caller: callerOf(req), environment_id: '', body_json: JSON.stringify(body) },
        req.id,
      );
      res.status(201).json(toCloudEnvironment(env));
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/environments/:uid',
    tag: 'Environments',
    summary: 'Retrieve an environment',
    success: json(r.cloudEnvironmentSchema, 'The environment.'),
    handle: async ({ req, res, api }) => {
      res.json(
        toCloudEnvironment(
          await api.call(
            'catalog',
            'GetEnvironment',
            { caller: callerOf(req), environment_id: req.params.uid },
            req.id,
          ),
        ),
      );
    },
  }),

  endpoint({
    method: 'put',
    path: '/agent/environments/:uid',
    tag: 'Environments',
    summary: 'Update an environment',
    success: json(r.cloudEnvironmentSchema, 'Updated.'),
    body: updateEnvironmentBody,
    handle: async ({ req, res, body, api }) => {
      const env = await api.call(
        'catalog',
        'UpdateEnvironment',
        { caller: callerOf(req), environment_id: req.params.uid, body_json: JSON.stringify(body) },
        req.id,
      );
      res.json(toCloudEnvironment(env));
    },
  }),

  endpoint({
    method: 'delete',
    path: '/agent/environments/:uid',
    tag: 'Environments',
    summary: 'Delete an environment',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call(
        'catalog',
        'DeleteEnvironment',
        { caller: callerOf(req), environment_id: req.params.uid },
        req.id,
      );
      res.status(204).end();
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/environments/:uid/guests',
    tag: 'Environments',
    summary: 'List guests and pending invitations',
    success: json(r.guestListResponseSchema, 'Guests and invitations.'),
    handle: async ({ req, res, api }) => {
      const result = await api.call(
        'catalog',
        'ListEnvironmentGuests',
        { caller: callerOf(req), environment_id: req.params.uid },
        req.id,
      );
      res.json({
        guests: result.guests.map(toGuestJson),
        invitations: result.invitations.map((i) => toInvitationJson(i)),
      });
    },
  }),

  // An invitation, never a grant: 202 with the same body whether or not an account has the e-mail (docs/guests.md).
  endpoint({
    method: 'post',
    path: '/agent/environments/:uid/guests',
    tag: 'Environments',
    summary: 'Invite a guest by e-mail',
    success: json(
      r.invitationSchema,
      'Invited; the same answer whether or not the e-mail has an account.',
      202,
    ),
    body: invitationBody,
    handle: async ({ req, res, body, api }) => {
      const invitation = await api.call(
        'catalog',
        'InviteEnvironmentGuest',
        { caller: callerOf(req), environment_id: req.params.uid, email: body.email },
        req.id,
      );
      res.status(202).json(toInvitationJson(invitation));
    },
  }),

  endpoint({
    method: 'delete',
    path: '/agent/environments/:uid/guests/:userId',
    tag: 'Environments',
    summary: 'Remove a guest',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call(
        'catalog',
        'RemoveEnvironmentGuest',
        { caller: callerOf(req), environment_id: req.params.uid, user_id: req.params.userId },
        req.id,
      );
      res.status(204).end();
    },
  }),

  endpoint({
    method: 'post',
    path: '/agent/environments/:uid/share-link',
    tag: 'Environments',
    summary: 'Enable link sharing',
    success: json(r.shareLinkResponseSchema, 'The share link.'),
    handle: async ({ req, res, api }) => {
      const link = await api.call(
        'catalog',
        'EnableEnvironmentLink',
        { caller: callerOf(req), environment_id: req.params.uid },
        req.id,
      );
      res.json({ environment_id: link.environment_id, token: link.token, url: linkUrl(req, link.token) });
    },
  }),

  endpoint({
    method: 'delete',
    path: '/agent/environments/:uid/share-link',
    tag: 'Environments',
    summary: 'Disable link sharing',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call(
        'catalog',
        'DisableEnvironmentLink',
        { caller: callerOf(req), environment_id: req.params.uid },
        req.id,
      );
      res.status(204).end();
    },
  }),

  // The invitee's side: its pending invitations, accepting one (it becomes a guest), declining one. A manager
  // withdraws an invitation with the same DELETE.
  endpoint({
    method: 'get',
    path: '/agent/environment-invitations',
    tag: 'Environments',
    summary: "List the caller's pending invitations",
    success: json(r.invitationListResponseSchema, 'Invitations addressed to the caller.'),
    handle: async ({ req, res, api }) => {
      const result = await api.call(
        'catalog',
        'ListEnvironmentInvitations',
        { caller: callerOf(req) },
        req.id,
      );
      res.json({ invitations: result.invitations.map((i) => toInvitationJson(i, true)) });
    },
  }),

  endpoint({
    method: 'post',
    path: '/agent/environment-invitations/:invitationId/accept',
    tag: 'Environments',
    summary: 'Accept an invitation',
    success: json(r.cloudEnvironmentSchema, 'The environment, now usable by the caller as a guest.'),
    handle: async ({ req, res, api }) => {
      res.json(
        toCloudEnvironment(
          await api.call(
            'catalog',
            'AcceptEnvironmentInvitation',
            { caller: callerOf(req), invitation_id: req.params.invitationId },
            req.id,
          ),
        ),
      );
    },
  }),

  endpoint({
    method: 'delete',
    path: '/agent/environment-invitations/:invitationId',
    tag: 'Environments',
    summary: 'Decline or withdraw an invitation',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call(
        'catalog',
        'DeleteEnvironmentInvitation',
        { caller: callerOf(req), invitation_id: req.params.invitationId },
        req.id,
      );
      res.status(204).end();
    },
  }),

  // Redeeming records that the caller reached the environment by link; it then lists and runs like a guest's.
  endpoint({
    method: 'post',
    path: '/agent/environment-links/:token',
    tag: 'Environments',
    summary: 'Redeem a share link',
    success: json(r.cloudEnvironmentSchema, 'The environment, now reachable by the caller.'),
    handle: async ({ req, res, api }) => {
      res.json(
        toCloudEnvironment(
          await api.call(
            'catalog',
            'RedeemEnvironmentLink',
            { caller: callerOf(req), token: req.params.token },
            req.id,
          ),
        ),
      );
    },
  }),
];
