import { AppError, notFound } from '@conveyor/errors';
import { newId, type EnvironmentInvitation as InvitationRow, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { assertCanManage, canManage, findEnvironmentForCaller } from './environment-access';
import type { EnvironmentView } from './environment-view';
import type { Environments } from './environments';

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** A pending invitation; the environment's name is shown to the invitee only (empty in a manager's list). */
export interface InvitationView {
  invitation: InvitationRow;
  environmentName: string;
}

/** An accepted guest, with the account's name and e-mail (empty once the account is gone). */
export interface GuestView {
  userId: string;
  displayName: string;
  email: string;
  grantedAt: Date;
}

const invitationView = (invitation: InvitationRow, environmentName = ''): InvitationView => ({
  invitation,
  environmentName,
});

/** Whom an invitation is for: the caller whose account has its e-mail (agents have none). */
const inviteeEmail = (caller: Caller): string | undefined => caller.email.trim().toLowerCase() || undefined;

/**
 * Guests by invitation (docs/guests.md). A manager invites an e-mail; nothing is looked up, so the answer is the
 * same whether or not an account has that e-mail. The invitation grants nothing: reachability (and with it the
 * environment's skills and setup in the guest's runs) starts when the invitee accepts, which turns it into a GUEST
 * grant. The invitee may decline; a manager may withdraw it or remove the guest later.
 */
export class EnvironmentGuests {
  constructor(
    private readonly db: PrismaClient,
    private readonly environments: Environments,
  ) {}

  /** Accepted guests and pending invitations; managers only. */
  async list(
    caller: Caller,
    environmentId: string,
  ): Promise<{ guests: GuestView[]; invitations: InvitationView[] }> {
    const env = await findEnvironmentForCaller(this.db, caller, environmentId);
    assertCanManage(env, caller);
    const grants = env.grants
      .filter((g) => g.kind === 'GUEST')
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    const [users, invitations] = await Promise.all([
      this.db.user.findMany({ where: { id: { in: grants.map((g) => g.principalId) } } }),
      this.db.environmentInvitation.findMany({
        where: { environmentId: env.id },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),
    ]);
    const guests = grants.map((g) => {
      const user = users.find((u) => u.id === g.principalId);
      return {
        userId: g.principalId,
        displayName: user?.displayName ?? '',
        email: user?.email ?? '',
        grantedAt: g.createdAt,
      };
    });
    return { guests, invitations: invitations.map((row) => invitationView(row)) };
  }

  /** Inviting the same e-mail again returns the same pending invitation. */
  async invite(caller: Caller, environmentId: string, rawEmail: string): Promise<InvitationView> {
    const env = await findEnvironmentForCaller(this.db, caller, environmentId);
    assertCanManage(env, caller);
    const email = rawEmail.trim().toLowerCase();
    if (!EMAIL.test(email) || email.length > 320)
      throw new AppError('invalid_request', 'email must be an e-mail address');
    const row = await this.db.environmentInvitation.upsert({
      where: { environmentId_email: { environmentId: env.id, email } },
      create: { id: newId('einv'), environmentId: env.id, email, invitedById: caller.principal_id },
      update: {},
    });
    return invitationView(row);
  }

  async removeGuest(caller: Caller, environmentId: string, userId: string): Promise<void> {
    const env = await findEnvironmentForCaller(this.db, caller, environmentId);
    assertCanManage(env, caller);
    const removed = await this.db.environmentAccess.deleteMany({
      where: { environmentId: env.id, principalId: userId, kind: 'GUEST' },
    });
    if (removed.count === 0) throw notFound('Guest');
  }

  /** The caller's pending invitations, with the environments' names (the invitee cannot read them otherwise). */
  async pendingFor(caller: Caller): Promise<InvitationView[]> {
    const email = inviteeEmail(caller);
    if (!email) return [];
    const rows = await this.db.environmentInvitation.findMany({
      where: { email },
      include: { environment: { select: { name: true } } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return rows.map((row) => invitationView(row, row.environment.name));
  }

  async accept(caller: Caller, invitationId: string): Promise<EnvironmentView> {
    const invitation = await this.addressedTo(caller, invitationId);
    if (!invitation) throw notFound('Invitation');
    await this.db.$transaction([
      this.db.environmentAccess.upsert({
        where: {
          environmentId_principalId_kind: {
            environmentId: invitation.environmentId,
            principalId: caller.principal_id,
            kind: 'GUEST',
          },
        },
        create: {
          id: newId('eacc'),
          environmentId: invitation.environmentId,
          principalId: caller.principal_id,
          kind: 'GUEST',
          grantedById: invitation.invitedById || null,
        },
        update: {},
      }),
      this.db.environmentInvitation.delete({ where: { id: invitation.id } }),
    ]);
    return this.environments.get(caller, invitation.environmentId);
  }

  /** Declined by the invitee, or withdrawn by a manager; anyone else gets the 404 of a missing invitation. */
  async delete(caller: Caller, invitationId: string): Promise<void> {
    let invitation = await this.addressedTo(caller, invitationId);
    if (!invitation) {
      const row = invitationId
        ? await this.db.environmentInvitation.findUnique({
            where: { id: invitationId },
            include: { environment: true },
          })
        : null;
      if (!row || !canManage(row.environment, caller)) throw notFound('Invitation');
      invitation = row;
    }
    await this.db.environmentInvitation.deleteMany({ where: { id: invitation.id } });
  }

  private async addressedTo(caller: Caller, invitationId: string): Promise<InvitationRow | null> {
    const email = inviteeEmail(caller);
    if (!email || !invitationId) return null;
    return this.db.environmentInvitation.findFirst({ where: { id: invitationId, email } });
  }
}
