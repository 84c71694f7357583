import { AppError } from '@conveyor/errors';
import type { Caller__Output } from '@conveyor/proto';
import type { Caller } from '../auth/caller';

/** Every request acting for someone must carry the caller the gateway authenticated; the wire's Caller is the domain's. */
export function requireCaller(caller: Caller__Output | null): Caller {
  if (!caller?.team_id) throw new AppError('authentication_required', 'Missing caller');
  return caller;
}
