import { AppError } from '@conveyor/errors';
import { newId, type Factory, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { requireFactoryManager } from './permissions';

export const MAX_FACTORY_NAME_LENGTH = 100;

export interface FactoryView extends Factory {
  webhookCount: number;
  automationCount: number;
}

const notFound = () => new AppError('resource_not_found', 'Factory not found');

function validName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new AppError('invalid_request', 'name is required');
  if (trimmed.length > MAX_FACTORY_NAME_LENGTH)
    throw new AppError('invalid_request', `name must be at most ${MAX_FACTORY_NAME_LENGTH} characters`);
  return trimmed;
}

/** A factory of the caller's team; another team's factory is reported exactly like a missing one. */
export async function loadFactory(db: PrismaClient, caller: Caller, factoryId: string): Promise<Factory> {
  const factory = factoryId
    ? await db.factory.findFirst({ where: { id: factoryId, teamId: caller.team_id } })
    : null;
  if (!factory) throw notFound();
  return factory;
}

async function withCounts(db: PrismaClient, factories: Factory[]): Promise<FactoryView[]> {
  if (factories.length === 0) return [];
  const ids = factories.map((f) => f.id);
  const [webhooks, automations] = await Promise.all([
    db.webhook.groupBy({ by: ['factoryId'], where: { factoryId: { in: ids } }, _count: { _all: true } }),
    db.automation.groupBy({ by: ['factoryId'], where: { factoryId: { in: ids } }, _count: { _all: true } }),
  ]);
  const count = (rows: Array<{ factoryId: string; _count: { _all: number } }>, id: string) =>
    rows.find((r) => r.factoryId === id)?._count._all ?? 0;
  return factories.map((f) => ({
    ...f,
    webhookCount: count(webhooks, f.id),
    automationCount: count(automations, f.id),
  }));
}

export async function createFactory(
  db: PrismaClient,
  caller: Caller,
  input: { name: string },
): Promise<FactoryView> {
  requireFactoryManager(caller, 'Creating a factory');
  const name = validName(input.name);
  const existing = await db.factory.findFirst({ where: { teamId: caller.team_id, name } });
  if (existing) throw new AppError('conflict', `A factory named "${name}" already exists`);
  const factory = await db.factory.create({ data: { id: newId('fac'), teamId: caller.team_id, name } });
  return { ...factory, webhookCount: 0, automationCount: 0 };
}

export async function listFactories(db: PrismaClient, caller: Caller): Promise<FactoryView[]> {
  return withCounts(
    db,
    await db.factory.findMany({
      where: { teamId: caller.team_id },
      orderBy: [{ name: 'asc' }, { id: 'asc' }],
    }),
  );
}

export async function getFactory(db: PrismaClient, caller: Caller, factoryId: string): Promise<FactoryView> {
  const [view] = await withCounts(db, [await loadFactory(db, caller, factoryId)]);
  return view!;
}

/** Refused while the factory still holds webhooks or automations: deleting those is a deliberate act of its own. */
export async function deleteFactory(db: PrismaClient, caller: Caller, factoryId: string): Promise<void> {
  requireFactoryManager(caller, 'Deleting a factory');
  const view = await getFactory(db, caller, factoryId);
  if (view.webhookCount > 0 || view.automationCount > 0) {
    throw new AppError(
      'conflict',
      `Factory still has ${view.webhookCount} webhook(s) and ${view.automationCount} automation(s); delete them first`,
    );
  }
  await db.factory.delete({ where: { id: view.id } });
}
