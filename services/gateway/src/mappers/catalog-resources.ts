import type {
  EnvironmentGuest__Output,
  EnvironmentInvitation__Output,
  Environment__Output,
  Model__Output,
} from '@conveyor/proto';

type PrincipalOut = Environment__Output['creator'];

/** UserProfile (contract §0.11); agents are service accounts. */
function userProfile(p: PrincipalOut): Record<string, unknown> | undefined {
  if (!p?.uid) return undefined;
  return {
    uid: p.uid,
    ...(p.display_name ? { display_name: p.display_name } : {}),
    ...(p.email ? { email: p.email } : {}),
    type: p.type === 'AGENT' ? 'service_account' : 'user',
  };
}

/**
 * CloudEnvironment (contract §1.3) plus `access`, `link_sharing_enabled`, `created_at` (docs/catalog.md) and
 * `snapshot` (docs/snapshots.md "State in the API").
 */
export function toCloudEnvironment(env: Environment__Output): Record<string, unknown> {
  return {
    uid: env.uid,
    config: JSON.parse(env.config_json || '{}') as unknown,
    last_updated: env.last_updated,
    setup_failed: env.setup_failed,
    creator: userProfile(env.creator),
    last_editor: userProfile(env.last_editor),
    ...(env.last_task_created_json
      ? { last_task_created: JSON.parse(env.last_task_created_json) as unknown }
      : {}),
    last_task_run_timestamp: env.last_task_run_timestamp || null,
    scope: { type: env.scope_type, uid: env.scope_uid },
    access: env.access,
    link_sharing_enabled: env.link_sharing_enabled,
    created_at: env.created_at,
    snapshot: JSON.parse(env.snapshot_json || '{"state":"none"}') as unknown,
  };
}

export function toGuestJson(guest: EnvironmentGuest__Output): Record<string, unknown> {
  return {
    user_id: guest.user_id,
    display_name: guest.display_name,
    email: guest.email,
    granted_at: guest.granted_at,
  };
}

/** A pending invitation (docs/guests.md); the environment's name only where the invitee lists its invitations. */
export function toInvitationJson(
  invitation: EnvironmentInvitation__Output,
  withEnvironmentName = false,
): Record<string, unknown> {
  return {
    invitation_id: invitation.invitation_id,
    environment_id: invitation.environment_id,
    ...(withEnvironmentName && { environment_name: invitation.environment_name }),
    email: invitation.email,
    status: 'pending',
    invited_at: invitation.invited_at,
  };
}

/** One entry of GET /agent/models (docs/catalog.md). */
export function toModelJson(model: Model__Output): Record<string, unknown> {
  return {
    id: model.id,
    provider: model.provider,
    display_name: model.display_name,
    cost: {
      input_usd_per_million_tokens: model.input_usd_per_million_tokens,
      output_usd_per_million_tokens: model.output_usd_per_million_tokens,
    },
    is_default: model.is_default,
    disabled: model.disabled,
    disabled_reason: model.disabled ? model.disabled_reason : null,
  };
}
