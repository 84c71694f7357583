import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { AuthServiceHandlers } from '@conveyor/proto';
import { authenticateApiKey } from '../../auth/auth-service';
import { unary } from '../unary-handler';

/** AuthService: the gateway turns an API key into the caller every other RPC carries. */
export function authHandlers({ db, logger }: { db: PrismaClient; logger: Logger }): AuthServiceHandlers {
  return {
    Authenticate: unary(logger, 'Authenticate', async (req) => {
      const { caller, expiresAt } = await authenticateApiKey(db, req.api_key);
      return { caller, expires_at: expiresAt?.toISOString() ?? '' };
    }),
  };
}
