import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toSecretJson } from '../mappers/webhook-resources';
import { parseBody } from '../validation';
import { createSecretBody, setSecretBody } from '../schemas/webhook-request-schemas';

/** Team-managed secrets: create, set value, list and read metadata; a value is never returned. */
export function webhookSecretRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.post('/secrets', async (req, res) => {
    const body = parseBody(createSecretBody, req.body);
    res
      .status(201)
      .json(
        toSecretJson(
          await api.call(
            'factories',
            'CreateSecret',
            { caller: callerOf(req), name: body.name, value: body.value },
            req.id,
          ),
        ),
      );
  });

  router.get('/secrets', async (req, res) => {
    const { secrets } = await api.call('factories', 'ListSecrets', { caller: callerOf(req) }, req.id);
    res.json({ secrets: secrets.map(toSecretJson) });
  });

  router.get('/secrets/:name', async (req, res) => {
    res.json(
      toSecretJson(
        await api.call('factories', 'GetSecret', { caller: callerOf(req), name: req.params.name }, req.id),
      ),
    );
  });

  router.put('/secrets/:name', async (req, res) => {
    const body = parseBody(setSecretBody, req.body);
    res.json(
      toSecretJson(
        await api.call(
          'factories',
          'SetSecretValue',
          { caller: callerOf(req), name: req.params.name, value: body.value },
          req.id,
        ),
      ),
    );
  });

  router.delete('/secrets/:name', async (req, res) => {
    await api.call('factories', 'DeleteSecret', { caller: callerOf(req), name: req.params.name }, req.id);
    res.status(204).end();
  });

  return router;
}
