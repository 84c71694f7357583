import type { ClientBase } from 'pg';

export type ReferentialAction = 'Cascade' | 'Restrict' | 'NoAction' | 'SetNull' | 'SetDefault';

export interface DbColumn {
  name: string;
  /** `format_type()` without quotes: `text`, `timestamp(3) with time zone`, `RunState`, `text[]`. */
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}

export interface DbTable {
  name: string;
  columns: DbColumn[];
}

export interface DbEnum {
  name: string;
  values: string[];
}

export interface DbIndex {
  table: string;
  name: string;
  /** Column names in key order; `(expression)` for expression parts. */
  columns: string[];
  primary: boolean;
  unique: boolean;
  /** Access method: `btree`, `gin`, `gist`, `hash`, `brin`, `spgist`. */
  method: string;
  descending: boolean[];
  /** Operator class per column, `null` where it is the type's default. */
  opclasses: (string | null)[];
  partial: boolean;
  /** `pg_get_indexdef` from `USING` on: `USING btree ("teamId", (("updatedAt" - "createdAt")))`. */
  definition: string;
}

export interface DbForeignKey {
  table: string;
  name: string;
  columns: string[];
  referencedTable: string;
  referencedColumns: string[];
  onDelete: ReferentialAction;
  onUpdate: ReferentialAction;
}

/** What the drift check compares against the Prisma schema: the objects of the current schema (`public`). */
export interface DatabaseDescription {
  tables: DbTable[];
  enums: DbEnum[];
  indexes: DbIndex[];
  foreignKeys: DbForeignKey[];
}

const ACTIONS: Record<string, ReferentialAction> = {
  a: 'NoAction',
  r: 'Restrict',
  c: 'Cascade',
  n: 'SetNull',
  d: 'SetDefault',
};

export async function describeDatabase(client: ClientBase): Promise<DatabaseDescription> {
  const columns = await client.query<{ table: string; column: string | null } & Omit<DbColumn, 'name'>>(`
    SELECT c.relname::text AS "table", a.attname::text AS "column",
           replace(format_type(a.atttypid, a.atttypmod), '"', '') AS "type",
           NOT a.attnotnull AS "nullable", a.atthasdef AS "hasDefault"
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
    ORDER BY c.relname, a.attnum`);
  const tables = new Map<string, DbTable>();
  for (const row of columns.rows) {
    const table = tables.get(row.table) ?? { name: row.table, columns: [] };
    tables.set(row.table, table);
    if (row.column !== null) {
      table.columns.push({
        name: row.column,
        type: row.type,
        nullable: row.nullable,
        hasDefault: row.hasDefault,
      });
    }
  }

  const enums = await client.query<DbEnum>(`
    SELECT t.typname::text AS "name", array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS "values"
    FROM pg_type t
    JOIN pg_enum e ON e.enumtypid = t.oid
    JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname = current_schema()
    GROUP BY t.typname
    ORDER BY t.typname`);

  const indexes = await client.query<DbIndex>(`
    SELECT t.relname::text AS "table", i.relname::text AS "name",
           ix.indisprimary AS "primary", ix.indisunique AS "unique", am.amname::text AS "method",
           ARRAY(SELECT coalesce(a.attname::text, '(expression)')
                 FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                 LEFT JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum
                 ORDER BY k.ord) AS "columns",
           ARRAY(SELECT (o.opt & 1) = 1
                 FROM unnest(ix.indoption::int2[]) WITH ORDINALITY AS o(opt, ord)
                 ORDER BY o.ord) AS "descending",
           ARRAY(SELECT CASE WHEN oc.opcdefault THEN NULL ELSE oc.opcname::text END
                 FROM unnest(ix.indclass::oid[]) WITH ORDINALITY AS k(opc, ord)
                 JOIN pg_opclass oc ON oc.oid = k.opc
                 ORDER BY k.ord) AS "opclasses",
           ix.indpred IS NOT NULL AS "partial",
           substring(pg_get_indexdef(ix.indexrelid) FROM ' (USING .*)$') AS "definition"
    FROM pg_index ix
    JOIN pg_class i ON i.oid = ix.indexrelid
    JOIN pg_class t ON t.oid = ix.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    JOIN pg_am am ON am.oid = i.relam
    WHERE n.nspname = current_schema()
    ORDER BY t.relname, i.relname`);

  const foreignKeys = await client.query<
    Omit<DbForeignKey, 'onDelete' | 'onUpdate'> & { del: string; upd: string }
  >(`
    SELECT t.relname::text AS "table", con.conname::text AS "name", rt.relname::text AS "referencedTable",
           ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS "columns",
           ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord)
             AS "referencedColumns",
           con.confdeltype::text AS "del", con.confupdtype::text AS "upd"
    FROM pg_constraint con
    JOIN pg_class t ON t.oid = con.conrelid
    JOIN pg_class rt ON rt.oid = con.confrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE con.contype = 'f' AND n.nspname = current_schema()
    ORDER BY t.relname, con.conname`);

  return {
    tables: [...tables.values()],
    enums: enums.rows,
    indexes: indexes.rows,
    foreignKeys: foreignKeys.rows.map(({ del, upd, ...fk }) => ({
      ...fk,
      onDelete: ACTIONS[del] ?? 'NoAction',
      onUpdate: ACTIONS[upd] ?? 'NoAction',
    })),
  };
}
