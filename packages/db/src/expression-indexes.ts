/**
 * Indexes on expressions, which prisma/schema.prisma cannot express (Prisma indexes name columns only). Each is
 * created by a migration; schema.prisma mentions it in a comment on its model, and the drift check accepts it
 * only with exactly this definition (`pg_get_indexdef` from `USING` on).
 */
export const EXPRESSION_INDEXES: Readonly<Record<string, { table: string; definition: string }>> = {
  // A run's lifetime (last update minus creation), for the min and max per team: they bound a created_* filter on
  // the updated_at sort and an updated_after filter on the created_at sort (docs/runs.md).
  Run_teamId_lifetime_idx: {
    table: 'Run',
    definition: 'USING btree ("teamId", (("updatedAt" - "createdAt")))',
  },
};
