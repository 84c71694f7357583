import type { Logger } from '@conveyor/logger';
import type { CatalogServiceHandlers } from '@conveyor/proto';
import { environmentToProto, guestToProto, invitationToProto } from '../mappers/environment-to-proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import type { EnvironmentGuests } from '../../catalog/environment-guests';
import type { Environments } from '../../catalog/environments';
import type { ModelCatalog } from '../../catalog/model-catalog';
import type { SkillCatalog } from '../../catalog/skill-catalog';

export interface CatalogHandlerDeps {
  environments: Environments;
  guests: EnvironmentGuests;
  skills: SkillCatalog;
  models: ModelCatalog;
  logger: Logger;
}

/** CatalogService: skills, models and environments; the domain objects know nothing about gRPC. */
export function catalogHandlers({
  environments,
  guests,
  skills,
  models,
  logger,
}: CatalogHandlerDeps): CatalogServiceHandlers {
  return {
    ListSkills: unary(logger, 'ListSkills', async (req) => {
      const result = await skills.list(requireCaller(req.caller), {
        repo: req.repo || undefined,
        refresh: req.refresh,
        sortBy: req.sort_by,
        includeMalformed: req.include_malformed_skills,
      });
      return { agents_json: JSON.stringify(result) };
    }),
    ListModels: unary(logger, 'ListModels', async (req) => {
      requireCaller(req.caller);
      return {
        default_model_id: models.defaultModelId,
        models: models.models.map((m) => ({
          id: m.id,
          provider: m.provider,
          display_name: m.displayName,
          input_usd_per_million_tokens: m.inputUsdPerMillionTokens,
          output_usd_per_million_tokens: m.outputUsdPerMillionTokens,
          is_default: m.isDefault,
          disabled: m.disabled,
          disabled_reason: m.disabledReason,
        })),
      };
    }),
    CreateEnvironment: unary(logger, 'CreateEnvironment', async (req) => {
      const env = await environments.create(requireCaller(req.caller), req.body_json);
      logger.info({ environmentId: env.environment.id }, 'environment created');
      return environmentToProto(env);
    }),
    ListEnvironments: unary(logger, 'ListEnvironments', async (req) => ({
      environments: (await environments.list(requireCaller(req.caller), req.sort_by)).map(environmentToProto),
    })),
    GetEnvironment: unary(logger, 'GetEnvironment', async (req) =>
      environments.get(requireCaller(req.caller), req.environment_id).then(environmentToProto),
    ),
    UpdateEnvironment: unary(logger, 'UpdateEnvironment', async (req) =>
      environments
        .update(requireCaller(req.caller), req.environment_id, req.body_json)
        .then(environmentToProto),
    ),
    DeleteEnvironment: unary(logger, 'DeleteEnvironment', async (req) => {
      await environments.delete(requireCaller(req.caller), req.environment_id);
      logger.info({ environmentId: req.environment_id }, 'environment deleted');
      return {};
    }),
    ListEnvironmentGuests: unary(logger, 'ListEnvironmentGuests', async (req) => {
      const listed = await guests.list(requireCaller(req.caller), req.environment_id);
      return {
        guests: listed.guests.map(guestToProto),
        invitations: listed.invitations.map(invitationToProto),
      };
    }),
    InviteEnvironmentGuest: unary(logger, 'InviteEnvironmentGuest', async (req) => {
      const invitation = await guests.invite(requireCaller(req.caller), req.environment_id, req.email);
      logger.info(
        { environmentId: invitation.invitation.environmentId, invitationId: invitation.invitation.id },
        'guest invited',
      );
      return invitationToProto(invitation);
    }),
    RemoveEnvironmentGuest: unary(logger, 'RemoveEnvironmentGuest', async (req) => {
      await guests.removeGuest(requireCaller(req.caller), req.environment_id, req.user_id);
      return {};
    }),
    ListEnvironmentInvitations: unary(logger, 'ListEnvironmentInvitations', async (req) => ({
      invitations: (await guests.pendingFor(requireCaller(req.caller))).map(invitationToProto),
    })),
    AcceptEnvironmentInvitation: unary(logger, 'AcceptEnvironmentInvitation', async (req) => {
      const env = await guests.accept(requireCaller(req.caller), req.invitation_id);
      logger.info(
        { environmentId: env.environment.id, invitationId: req.invitation_id },
        'guest invitation accepted',
      );
      return environmentToProto(env);
    }),
    DeleteEnvironmentInvitation: unary(logger, 'DeleteEnvironmentInvitation', async (req) => {
      await guests.delete(requireCaller(req.caller), req.invitation_id);
      return {};
    }),
    EnableEnvironmentLink: unary(logger, 'EnableEnvironmentLink', async (req) =>
      environments.enableLink(requireCaller(req.caller), req.environment_id),
    ),
    DisableEnvironmentLink: unary(logger, 'DisableEnvironmentLink', async (req) => {
      await environments.disableLink(requireCaller(req.caller), req.environment_id);
      return {};
    }),
    RedeemEnvironmentLink: unary(logger, 'RedeemEnvironmentLink', async (req) =>
      environments.redeemLink(requireCaller(req.caller), req.token).then(environmentToProto),
    ),
  };
}
