// Guards the hand-written migrations: a database migrated from nothing must match prisma/schema.prisma exactly.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { get_dmmf } from '@prisma/prisma-schema-wasm';
import { describeDatabase } from './describe-database';
import { migrate } from './migrator';
import { findSchemaDrift, type DmmfDatamodel } from './schema-drift';
import { createScratchDatabase, withClient, type ScratchDatabase } from './test-support/scratch-database';

function schemaDatamodel(): DmmfDatamodel {
  const prismaSchema = readFileSync(path.join(__dirname, '..', 'prisma', 'schema.prisma'), 'utf8');
  return (JSON.parse(get_dmmf(JSON.stringify({ prismaSchema }))) as { datamodel: DmmfDatamodel }).datamodel;
}

describe('schema drift', () => {
  let db: ScratchDatabase;

  beforeAll(async () => {
    db = await createScratchDatabase('drift');
    await migrate(db.url);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('the migrated database matches schema.prisma', async () => {
    const description = await withClient(db.url, describeDatabase);
    const differences = findSchemaDrift(schemaDatamodel(), description);
    // Joined so a failure prints one readable list of what to fix in the schema or in a new migration.
    expect(differences.join('\n')).toBe('');
  });
});
