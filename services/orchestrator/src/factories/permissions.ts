import { AppError } from '@conveyor/errors';
import type { Caller } from '../auth/caller';

/**
 * Creating and editing factories, webhooks, automations and secrets requires permission to manage the factory:
 * the team role ADMIN. Every other member (and every agent) can read; a write answers 403 not_authorized.
 */
export function requireFactoryManager(caller: Caller, action: string): void {
  if (caller.role === 'ADMIN') return;
  const role = caller.principal_type === 'AGENT' ? 'an agent' : `role ${caller.role || 'MEMBER'}`;
  throw new AppError(
    'not_authorized',
    `${action} requires permission to manage the factory (team role ADMIN); the caller has ${role}`,
  );
}
