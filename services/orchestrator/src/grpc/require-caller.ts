import { AppError } from '@conveyor/errors';
import type { Caller__Output } from '@conveyor/proto';

/** Every request acting for someone must carry the caller the gateway authenticated. */
export function requireCaller(caller: Caller__Output | null): Caller__Output {
  if (!caller?.team_id) throw new AppError('authentication_required', 'Missing caller');
  return caller;
}
