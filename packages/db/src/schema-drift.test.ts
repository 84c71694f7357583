import type { DatabaseDescription } from './describe-database';
import { defaultConstraintName, findSchemaDrift, type DmmfDatamodel } from './schema-drift';

// A two-model schema in DMMF form, as `get_dmmf` returns it (trimmed to what the comparison reads).
const datamodel: DmmfDatamodel = {
  enums: [{ name: 'Role', values: [{ name: 'ADMIN' }, { name: 'MEMBER' }] }],
  models: [
    {
      name: 'Team',
      dbName: null,
      fields: [
        {
          name: 'id',
          kind: 'scalar',
          isList: false,
          isRequired: true,
          hasDefaultValue: false,
          type: 'String',
        },
        {
          name: 'createdAt',
          kind: 'scalar',
          isList: false,
          isRequired: true,
          hasDefaultValue: true,
          type: 'DateTime',
          nativeType: ['Timestamptz', ['3']],
          default: { name: 'now', args: [] },
        },
        {
          name: 'users',
          kind: 'object',
          isList: true,
          isRequired: true,
          hasDefaultValue: false,
          type: 'User',
        },
      ],
    },
    {
      name: 'User',
      dbName: 'users',
      fields: [
        {
          name: 'id',
          kind: 'scalar',
          isList: false,
          isRequired: true,
          hasDefaultValue: false,
          type: 'String',
          nativeType: ['Uuid', []],
        },
        {
          name: 'teamId',
          kind: 'scalar',
          isList: false,
          isRequired: true,
          hasDefaultValue: false,
          type: 'String',
        },
        {
          name: 'email',
          kind: 'scalar',
          isList: false,
          isRequired: false,
          hasDefaultValue: false,
          type: 'String',
        },
        {
          name: 'role',
          kind: 'enum',
          isList: false,
          isRequired: true,
          hasDefaultValue: true,
          type: 'Role',
          default: 'MEMBER',
        },
        {
          name: 'tags',
          dbName: 'tag_list',
          kind: 'scalar',
          isList: true,
          isRequired: true,
          hasDefaultValue: true,
          type: 'String',
          default: [],
        },
        {
          name: 'profile',
          kind: 'scalar',
          isList: false,
          isRequired: true,
          hasDefaultValue: true,
          type: 'Json',
          default: '{}',
        },
        {
          name: 'team',
          kind: 'object',
          isList: false,
          isRequired: true,
          hasDefaultValue: false,
          type: 'Team',
          relationFromFields: ['teamId'],
          relationToFields: ['id'],
          relationOnDelete: 'Cascade',
        },
      ],
    },
  ],
  indexes: [
    { model: 'Team', type: 'id', fields: [{ name: 'id' }] },
    { model: 'User', type: 'id', fields: [{ name: 'id' }] },
    { model: 'User', type: 'unique', fields: [{ name: 'email' }] },
    { model: 'User', type: 'normal', fields: [{ name: 'teamId' }, { name: 'id', sortOrder: 'desc' }] },
    {
      model: 'User',
      type: 'normal',
      algorithm: 'Gin',
      fields: [{ name: 'profile', operatorClass: 'JsonbPathOps' }],
    },
  ],
};

function btree(
  table: string,
  name: string,
  columns: string[],
  extra: Partial<DatabaseDescription['indexes'][number]> = {},
) {
  return {
    table,
    name,
    columns,
    primary: false,
    unique: false,
    method: 'btree',
    descending: columns.map(() => false),
    opclasses: columns.map(() => null),
    partial: false,
    definition: `USING ${extra.method ?? 'btree'} (${columns.map((c) => `"${c}"`).join(', ')})`,
    ...extra,
  };
}

/** The database that `datamodel` describes; each test breaks one thing. */
function matchingDatabase(): DatabaseDescription {
  return {
    enums: [{ name: 'Role', values: ['ADMIN', 'MEMBER'] }],
    tables: [
      {
        name: 'Team',
        columns: [
          { name: 'id', type: 'text', nullable: false, hasDefault: false },
          { name: 'createdAt', type: 'timestamp(3) with time zone', nullable: false, hasDefault: true },
        ],
      },
      {
        name: 'users',
        columns: [
          { name: 'id', type: 'uuid', nullable: false, hasDefault: false },
          { name: 'teamId', type: 'text', nullable: false, hasDefault: false },
          { name: 'email', type: 'text', nullable: true, hasDefault: false },
          { name: 'role', type: 'Role', nullable: false, hasDefault: true },
          { name: 'tag_list', type: 'text[]', nullable: true, hasDefault: true },
          { name: 'profile', type: 'jsonb', nullable: false, hasDefault: true },
        ],
      },
      {
        name: '_prisma_migrations',
        columns: [{ name: 'id', type: 'character varying(36)', nullable: false, hasDefault: false }],
      },
    ],
    indexes: [
      btree('Team', 'Team_pkey', ['id'], { primary: true, unique: true }),
      btree('users', 'users_pkey', ['id'], { primary: true, unique: true }),
      btree('users', 'users_email_key', ['email'], { unique: true }),
      btree('users', 'users_teamId_id_idx', ['teamId', 'id'], { descending: [false, true] }),
      btree('users', 'users_profile_idx', ['profile'], { method: 'gin', opclasses: ['jsonb_path_ops'] }),
      btree('_prisma_migrations', '_prisma_migrations_pkey', ['id'], { primary: true, unique: true }),
    ],
    foreignKeys: [
      {
        table: 'users',
        name: 'users_teamId_fkey',
        columns: ['teamId'],
        referencedTable: 'Team',
        referencedColumns: ['id'],
        onDelete: 'Cascade',
        onUpdate: 'Cascade',
      },
    ],
  };
}

function usersTable(db: DatabaseDescription) {
  const table = db.tables.find((t) => t.name === 'users');
  if (!table) throw new Error('fixture has no users table');
  return table;
}

describe('findSchemaDrift', () => {
  it('finds nothing when the database matches (bookkeeping table allowed)', () => {
    expect(findSchemaDrift(datamodel, matchingDatabase())).toEqual([]);
  });

  it('catches a dropped column', () => {
    const db = matchingDatabase();
    const users = usersTable(db);
    users.columns = users.columns.filter((c) => c.name !== 'email');
    expect(findSchemaDrift(datamodel, db)).toContain(
      'column "users"."email" (field User.email) is missing from the database',
    );
  });

  it('catches a nullability change', () => {
    const db = matchingDatabase();
    const teamId = usersTable(db).columns.find((c) => c.name === 'teamId');
    if (teamId) teamId.nullable = true;
    expect(findSchemaDrift(datamodel, db)).toEqual([
      'column "users"."teamId" is nullable, schema says NOT NULL',
    ]);
  });

  it('catches a missing index', () => {
    const db = matchingDatabase();
    db.indexes = db.indexes.filter((i) => i.name !== 'users_teamId_id_idx');
    expect(findSchemaDrift(datamodel, db)).toEqual([
      'index "users_teamId_id_idx" on "users" (normal on teamId, id) is missing from the database',
    ]);
  });

  it('catches an extra table', () => {
    const db = matchingDatabase();
    db.tables.push({
      name: 'Stray',
      columns: [{ name: 'id', type: 'text', nullable: false, hasDefault: false }],
    });
    expect(findSchemaDrift(datamodel, db)).toEqual([
      'table "Stray" exists in the database but no model maps to it',
    ]);
  });

  it('catches an extra column, a wrong type and a missing default', () => {
    const db = matchingDatabase();
    const users = usersTable(db);
    users.columns.push({ name: 'legacy', type: 'text', nullable: true, hasDefault: false });
    const createdAt = db.tables[0]?.columns[1];
    if (createdAt) Object.assign(createdAt, { type: 'timestamp(3) without time zone', hasDefault: false });
    expect(findSchemaDrift(datamodel, db)).toEqual([
      'column "Team"."createdAt" has type timestamp(3) without time zone, schema says timestamp(3) with time zone',
      'column "Team"."createdAt" has no default, schema says it has one',
      'column "users"."legacy" exists in the database but not in the schema',
    ]);
  });

  it('catches index shape changes: sort order, operator class, uniqueness, extra index', () => {
    const db = matchingDatabase();
    const byName = (name: string) => db.indexes.find((i) => i.name === name);
    Object.assign(byName('users_teamId_id_idx') ?? {}, { descending: [false, false] });
    Object.assign(byName('users_profile_idx') ?? {}, { opclasses: [null] });
    Object.assign(byName('users_email_key') ?? {}, { unique: false });
    db.indexes.push(btree('users', 'users_role_idx', ['role']));
    expect(findSchemaDrift(datamodel, db)).toEqual([
      'index "users_email_key" on "users" is non-unique, schema says unique',
      'index "users_teamId_id_idx" on "users" has sort orders [ASC, ASC], schema says [ASC, DESC]',
      'index "users_profile_idx" on "users" has operator classes [default], schema says [jsonb_path_ops]',
      'index "users_role_idx" on "users" (role) exists in the database but not in the schema',
    ]);
  });

  it('accepts an expression index only as defined, and misses it when dropped', () => {
    const expression = {
      users_age_idx: { table: 'users', definition: 'USING btree ((now() - "createdAt"))' },
    };
    const db = matchingDatabase();
    expect(findSchemaDrift(datamodel, db, expression)).toEqual([
      'expression index "users_age_idx" on "users" is missing from the database',
    ]);
    db.indexes.push(btree('users', 'users_age_idx', ['(expression)'], { definition: 'USING btree (id)' }));
    expect(findSchemaDrift(datamodel, db, expression)).toEqual([
      'expression index "users_age_idx" on "users" is USING btree (id), expected USING btree ((now() - "createdAt"))',
    ]);
    db.indexes[db.indexes.length - 1]!.definition = expression.users_age_idx.definition;
    expect(findSchemaDrift(datamodel, db, expression)).toEqual([]);
  });

  it('catches enum and foreign key drift', () => {
    const db = matchingDatabase();
    db.enums = [
      { name: 'Role', values: ['ADMIN'] },
      { name: 'Mood', values: ['OK'] },
    ];
    const fk = db.foreignKeys[0];
    if (fk) fk.onDelete = 'Restrict';
    expect(findSchemaDrift(datamodel, db)).toEqual([
      'enum "Role" has values [ADMIN], schema says [ADMIN, MEMBER]',
      'enum type "Mood" exists in the database but not in the schema',
      'foreign key on "users"(teamId) is ON DELETE Restrict, schema says Cascade',
    ]);
  });
});

describe('defaultConstraintName', () => {
  it('names like Prisma and stays within 63 characters', () => {
    expect(defaultConstraintName('Run', ['teamId', 'updatedAt', 'id'], 'idx')).toBe(
      'Run_teamId_updatedAt_id_idx',
    );
    expect(defaultConstraintName('Run', [], 'pkey')).toBe('Run_pkey');
    const long = defaultConstraintName('T'.repeat(40), ['c'.repeat(40)], 'key');
    expect(long).toHaveLength(63);
    expect(long.endsWith('_key')).toBe(true);
  });
});
