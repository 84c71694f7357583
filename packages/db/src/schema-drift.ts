// Compares the Prisma schema (its DMMF, from `@prisma/prisma-schema-wasm`'s `get_dmmf`) with a described database.
// Hand-written SQL migrations replace `prisma migrate` here, so this is what keeps the two from drifting apart.
// Pure: no I/O, so the unit test can prove it catches each kind of drift.
import type { DatabaseDescription, DbColumn, DbIndex, ReferentialAction } from './describe-database';
import { EXPRESSION_INDEXES } from './expression-indexes';

/** The parts of Prisma's DMMF datamodel the comparison reads. */
export interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: 'scalar' | 'object' | 'enum' | 'unsupported';
  isList: boolean;
  isRequired: boolean;
  hasDefaultValue: boolean;
  type: string;
  nativeType?: [string, string[]] | null;
  default?: unknown;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}

export interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}

export interface DmmfEnum {
  name: string;
  dbName?: string | null;
  values: { name: string; dbName?: string | null }[];
}

export interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  dbName?: string | null;
  algorithm?: string;
  fields: { name: string; sortOrder?: 'asc' | 'desc'; operatorClass?: string }[];
}

export interface DmmfDatamodel {
  models: DmmfModel[];
  enums: DmmfEnum[];
  indexes: DmmfIndex[];
}

/** Tables the database may hold without a model: Prisma's own bookkeeping. */
const BOOKKEEPING_TABLES = new Set(['_prisma_migrations']);

// PostgreSQL truncates identifiers to 63 bytes; Prisma's default names are cut to fit before the suffix.
const MAX_IDENTIFIER_LENGTH = 63;

/** Human-readable differences; empty when the database matches the schema. */
export function findSchemaDrift(
  datamodel: DmmfDatamodel,
  db: DatabaseDescription,
  expressionIndexes: typeof EXPRESSION_INDEXES = EXPRESSION_INDEXES,
): string[] {
  const diffs: string[] = [];
  const enumDbNames = new Map(datamodel.enums.map((e) => [e.name, e.dbName ?? e.name]));
  compareEnums(datamodel.enums, db, diffs);

  const modelTables = new Set<string>();
  for (const model of datamodel.models) {
    const table = tableName(model);
    modelTables.add(table);
    const dbTable = db.tables.find((t) => t.name === table);
    if (!dbTable) {
      diffs.push(`table "${table}" (model ${model.name}) is missing from the database`);
      continue;
    }
    compareColumns(model, dbTable.columns, enumDbNames, diffs);
    compareIndexes(
      model,
      datamodel,
      db.indexes.filter((i) => i.table === table),
      expressionIndexes,
      diffs,
    );
    compareForeignKeys(model, datamodel, db, diffs);
  }
  for (const table of db.tables) {
    if (!modelTables.has(table.name) && !BOOKKEEPING_TABLES.has(table.name)) {
      diffs.push(`table "${table.name}" exists in the database but no model maps to it`);
    }
  }
  return diffs;
}

function tableName(model: DmmfModel): string {
  return model.dbName ?? model.name;
}

function columnName(field: DmmfField): string {
  return field.dbName ?? field.name;
}

function compareEnums(enums: DmmfEnum[], db: DatabaseDescription, diffs: string[]): void {
  const expected = new Set<string>();
  for (const e of enums) {
    const name = e.dbName ?? e.name;
    expected.add(name);
    const dbEnum = db.enums.find((d) => d.name === name);
    const values = e.values.map((v) => v.dbName ?? v.name);
    if (!dbEnum) diffs.push(`enum type "${name}" is missing from the database`);
    else if (dbEnum.values.join(',') !== values.join(',')) {
      diffs.push(
        `enum "${name}" has values [${dbEnum.values.join(', ')}], schema says [${values.join(', ')}]`,
      );
    }
  }
  for (const dbEnum of db.enums) {
    if (!expected.has(dbEnum.name))
      diffs.push(`enum type "${dbEnum.name}" exists in the database but not in the schema`);
  }
}

function compareColumns(
  model: DmmfModel,
  columns: DbColumn[],
  enumDbNames: ReadonlyMap<string, string>,
  diffs: string[],
): void {
  const table = tableName(model);
  const expected = new Set<string>();
  for (const field of model.fields) {
    if (field.kind === 'object' || field.kind === 'unsupported') continue;
    const name = columnName(field);
    expected.add(name);
    const column = columns.find((c) => c.name === name);
    const where = `column "${table}"."${name}"`;
    if (!column) {
      diffs.push(`${where} (field ${model.name}.${field.name}) is missing from the database`);
      continue;
    }
    const type = expectedColumnType(field, enumDbNames);
    if (type !== column.type) diffs.push(`${where} has type ${column.type}, schema says ${type}`);
    // Prisma creates scalar lists as nullable arrays, whatever the field's arity says.
    const nullable = field.isList || !field.isRequired;
    if (nullable !== column.nullable) {
      diffs.push(
        `${where} is ${column.nullable ? 'nullable' : 'NOT NULL'}, schema says ${nullable ? 'nullable' : 'NOT NULL'}`,
      );
    }
    const hasDefault = expectsDatabaseDefault(field);
    if (hasDefault !== column.hasDefault) {
      diffs.push(
        `${where} ${column.hasDefault ? 'has a' : 'has no'} default, schema says ${hasDefault ? 'it has one' : 'none'}`,
      );
    }
  }
  for (const column of columns) {
    if (!expected.has(column.name))
      diffs.push(`column "${table}"."${column.name}" exists in the database but not in the schema`);
  }
}

// Prisma Client fills these in itself; they leave no default in the database.
const CLIENT_SIDE_DEFAULTS = new Set(['uuid', 'cuid', 'nanoid', 'ulid']);

function expectsDatabaseDefault(field: DmmfField): boolean {
  if (!field.hasDefaultValue) return false;
  const fn = field.default as { name?: unknown } | undefined;
  return !(fn && typeof fn === 'object' && !Array.isArray(fn) && CLIENT_SIDE_DEFAULTS.has(String(fn.name)));
}

/** The scalar types' default PostgreSQL types, as `format_type()` prints them. */
const SCALAR_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Float: 'double precision',
  Decimal: 'numeric(65,30)',
  Boolean: 'boolean',
  DateTime: 'timestamp(3) without time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
};

/** `@db.*` native types, as `format_type()` prints them; `(n)` is replaced by the attribute's arguments. */
const NATIVE_TYPES: Record<string, [withArgs: string, withoutArgs: string]> = {
  Text: ['text', 'text'],
  VarChar: ['character varying(n)', 'character varying'],
  Char: ['character(n)', 'character(1)'],
  Uuid: ['uuid', 'uuid'],
  Citext: ['citext', 'citext'],
  Inet: ['inet', 'inet'],
  Xml: ['xml', 'xml'],
  Bit: ['bit(n)', 'bit(1)'],
  VarBit: ['bit varying(n)', 'bit varying'],
  Integer: ['integer', 'integer'],
  SmallInt: ['smallint', 'smallint'],
  BigInt: ['bigint', 'bigint'],
  Oid: ['oid', 'oid'],
  DoublePrecision: ['double precision', 'double precision'],
  Real: ['real', 'real'],
  Decimal: ['numeric(n)', 'numeric'],
  Money: ['money', 'money'],
  Timestamp: ['timestamp(n) without time zone', 'timestamp without time zone'],
  Timestamptz: ['timestamp(n) with time zone', 'timestamp with time zone'],
  Date: ['date', 'date'],
  Time: ['time(n) without time zone', 'time without time zone'],
  Timetz: ['time(n) with time zone', 'time with time zone'],
  Json: ['json', 'json'],
  JsonB: ['jsonb', 'jsonb'],
  ByteA: ['bytea', 'bytea'],
  Boolean: ['boolean', 'boolean'],
};

export function expectedColumnType(field: DmmfField, enumDbNames: ReadonlyMap<string, string>): string {
  let base: string;
  if (field.kind === 'enum') base = enumDbNames.get(field.type) ?? field.type;
  else if (field.nativeType) {
    const [native, args] = field.nativeType;
    const pattern = NATIVE_TYPES[native];
    base = pattern
      ? args.length > 0
        ? pattern[0].replace('(n)', `(${args.join(',')})`)
        : pattern[1]
      : `unknown native type @db.${native}`;
  } else base = SCALAR_TYPES[field.type] ?? `unknown scalar type ${field.type}`;
  return field.isList ? `${base}[]` : base;
}

/** Prisma's default constraint name: `<table>_<columns>_<suffix>`, cut to fit PostgreSQL's identifier limit. */
export function defaultConstraintName(table: string, columns: readonly string[], suffix: string): string {
  const base = columns.length > 0 ? `${table}_${columns.join('_')}` : table;
  return `${base.slice(0, MAX_IDENTIFIER_LENGTH - suffix.length - 1)}_${suffix}`;
}

const INDEX_SUFFIX = { id: 'pkey', unique: 'key', normal: 'idx', fulltext: 'idx' } as const;

function compareIndexes(
  model: DmmfModel,
  datamodel: DmmfDatamodel,
  dbIndexes: DbIndex[],
  expressionIndexes: typeof EXPRESSION_INDEXES,
  diffs: string[],
): void {
  const table = tableName(model);
  const expectedNames = new Set<string>();
  for (const index of datamodel.indexes.filter((i) => i.model === model.name)) {
    const columns = index.fields.map((f) => columnOf(model, f.name));
    // Primary keys are named after the table alone.
    const name =
      index.dbName ??
      defaultConstraintName(table, index.type === 'id' ? [] : columns, INDEX_SUFFIX[index.type]);
    expectedNames.add(name);
    const dbIndex = dbIndexes.find((i) => i.name === name);
    const where = `index "${name}" on "${table}"`;
    if (!dbIndex) {
      diffs.push(`${where} (${index.type} on ${columns.join(', ')}) is missing from the database`);
      continue;
    }
    if (dbIndex.columns.join(',') !== columns.join(',')) {
      diffs.push(`${where} covers (${dbIndex.columns.join(', ')}), schema says (${columns.join(', ')})`);
    }
    const kind = (i: { primary: boolean; unique: boolean }) =>
      i.primary ? 'primary key' : i.unique ? 'unique' : 'non-unique';
    const expectedKind = kind({ primary: index.type === 'id', unique: index.type !== 'normal' });
    if (kind(dbIndex) !== expectedKind)
      diffs.push(`${where} is ${kind(dbIndex)}, schema says ${expectedKind}`);
    const method = (index.algorithm ?? 'BTree').toLowerCase();
    if (dbIndex.method !== method) diffs.push(`${where} uses ${dbIndex.method}, schema says ${method}`);
    const descending = index.fields.map((f) => f.sortOrder === 'desc');
    if (dbIndex.descending.join(',') !== descending.join(',')) {
      diffs.push(
        `${where} has sort orders [${sortOrders(dbIndex.descending)}], schema says [${sortOrders(descending)}]`,
      );
    }
    const opclasses = index.fields.map((f) => operatorClassName(f.operatorClass));
    if (dbIndex.opclasses.join(',') !== opclasses.join(',')) {
      diffs.push(
        `${where} has operator classes [${dbIndex.opclasses.map(showOpclass)}], schema says [${opclasses.map(showOpclass)}]`,
      );
    }
    if (dbIndex.partial) diffs.push(`${where} is partial (WHERE …), which the schema cannot express`);
  }
  for (const [name, { table: on, definition }] of Object.entries(expressionIndexes)) {
    if (on !== table) continue;
    expectedNames.add(name);
    const dbIndex = dbIndexes.find((i) => i.name === name);
    if (!dbIndex) diffs.push(`expression index "${name}" on "${table}" is missing from the database`);
    else if (dbIndex.definition !== definition)
      diffs.push(`expression index "${name}" on "${table}" is ${dbIndex.definition}, expected ${definition}`);
  }
  for (const dbIndex of dbIndexes) {
    if (!expectedNames.has(dbIndex.name)) {
      diffs.push(
        `index "${dbIndex.name}" on "${table}" (${dbIndex.columns.join(', ')}) exists in the database but not in the schema`,
      );
    }
  }
}

function columnOf(model: DmmfModel, fieldName: string): string {
  const field = model.fields.find((f) => f.name === fieldName);
  return field ? columnName(field) : fieldName;
}

function sortOrders(descending: boolean[]): string {
  return descending.map((d) => (d ? 'DESC' : 'ASC')).join(', ');
}

function showOpclass(opclass: string | null): string {
  return opclass ?? 'default';
}

/** DMMF gives `JsonbPathOps` for named classes and the literal text for `raw("gin_trgm_ops")`. */
function operatorClassName(operatorClass: string | undefined): string | null {
  if (!operatorClass) return null;
  if (!/^[A-Z]/.test(operatorClass)) return operatorClass;
  return operatorClass.replace(/(?<!^)([A-Z])/g, '_$1').toLowerCase();
}

function compareForeignKeys(
  model: DmmfModel,
  datamodel: DmmfDatamodel,
  db: DatabaseDescription,
  diffs: string[],
): void {
  const table = tableName(model);
  const dbFks = db.foreignKeys.filter((fk) => fk.table === table);
  const expectedColumnSets = new Set<string>();
  for (const field of model.fields) {
    if (field.kind !== 'object' || !field.relationFromFields?.length) continue;
    const target = datamodel.models.find((m) => m.name === field.type);
    if (!target) continue;
    const columns = field.relationFromFields.map((f) => columnOf(model, f));
    const referencedColumns = (field.relationToFields ?? []).map((f) => columnOf(target, f));
    expectedColumnSets.add(columns.join(','));
    // The DMMF does not carry a relation's `map:` name, so foreign keys are matched by their columns.
    const dbFk = dbFks.find((fk) => fk.columns.join(',') === columns.join(','));
    const where = `foreign key on "${table}"(${columns.join(', ')})`;
    if (!dbFk) {
      diffs.push(`${where} (relation ${model.name}.${field.name}) is missing from the database`);
      continue;
    }
    const expectedTarget = `"${tableName(target)}"(${referencedColumns.join(', ')})`;
    const actualTarget = `"${dbFk.referencedTable}"(${dbFk.referencedColumns.join(', ')})`;
    if (expectedTarget !== actualTarget)
      diffs.push(`${where} references ${actualTarget}, schema says ${expectedTarget}`);
    // Prisma's defaults: SetNull for optional relations, Restrict for required ones; Cascade on update.
    const onDelete = (field.relationOnDelete ??
      (field.isRequired ? 'Restrict' : 'SetNull')) as ReferentialAction;
    const onUpdate = (field.relationOnUpdate ?? 'Cascade') as ReferentialAction;
    if (dbFk.onDelete !== onDelete)
      diffs.push(`${where} is ON DELETE ${dbFk.onDelete}, schema says ${onDelete}`);
    if (dbFk.onUpdate !== onUpdate)
      diffs.push(`${where} is ON UPDATE ${dbFk.onUpdate}, schema says ${onUpdate}`);
  }
  for (const fk of dbFks) {
    if (!expectedColumnSets.has(fk.columns.join(','))) {
      diffs.push(
        `foreign key "${fk.name}" on "${table}"(${fk.columns.join(', ')}) exists in the database but not in the schema`,
      );
    }
  }
}
