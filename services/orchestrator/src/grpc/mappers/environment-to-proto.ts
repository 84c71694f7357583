import type { Environment, EnvironmentGuest, EnvironmentInvitation } from '@conveyor/proto';
import type { GuestView, InvitationView } from '../../catalog/environment-guests';
import type { EnvironmentView, Principal } from '../../catalog/environment-view';
import { iso } from './iso';

const principalToProto = (p: Principal) => ({
  type: p.type,
  uid: p.uid,
  display_name: p.displayName,
  email: p.email,
});

export function environmentToProto(view: EnvironmentView): Environment {
  const { environment: env, latestRun: run } = view;
  return {
    uid: env.id,
    config_json: JSON.stringify(view.config),
    last_updated: iso(env.updatedAt),
    created_at: iso(env.createdAt),
    setup_failed: run?.errorCode === 'environment_setup_failed',
    creator: principalToProto(view.creator),
    last_editor: principalToProto(view.lastEditor),
    last_task_created_json: run
      ? JSON.stringify({
          id: run.id,
          title: run.title,
          state: run.state,
          created_at: iso(run.createdAt),
          updated_at: iso(run.updatedAt),
          started_at: run.startedAt ? iso(run.startedAt) : null,
        })
      : '',
    last_task_run_timestamp: iso(run?.startedAt ?? run?.createdAt),
    scope_type: env.scopeType === 'USER' ? 'User' : 'Team',
    scope_uid: env.scopeType === 'USER' ? env.ownerId : env.teamId,
    access: view.access,
    link_sharing_enabled: env.shareToken !== null,
    snapshot_json: JSON.stringify({
      state: view.snapshot?.state ?? 'none',
      snapshot_id: view.snapshot?.snapshotId ?? null,
      updated_at: view.snapshot ? iso(view.snapshot.updatedAt) : null,
      run_id: view.snapshot?.runId ?? null,
    }),
  };
}

export const invitationToProto = ({
  invitation,
  environmentName,
}: InvitationView): EnvironmentInvitation => ({
  invitation_id: invitation.id,
  environment_id: invitation.environmentId,
  environment_name: environmentName,
  email: invitation.email,
  invited_at: iso(invitation.createdAt),
});

export const guestToProto = (guest: GuestView): EnvironmentGuest => ({
  user_id: guest.userId,
  display_name: guest.displayName,
  email: guest.email,
  granted_at: iso(guest.grantedAt),
});
