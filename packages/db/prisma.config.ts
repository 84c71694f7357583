import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  // Prisma 7 reads the URL from here (not the schema) for `prisma migrate deploy`/`status` where the schema engine
  // exists; optional so `prisma generate` works without a database.
  datasource: { url: process.env['DATABASE_URL'] },
});
