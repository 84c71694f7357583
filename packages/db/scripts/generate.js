#!/usr/bin/env node
// `prisma generate` only checks that a schema engine file exists; the native engine cannot be downloaded on
// machines without Prisma's binary host, and generation does not run it. Point the check at this file.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || __filename,
};
execFileSync(process.execPath, [require.resolve('prisma/build/index.js'), 'generate'], {
  cwd: path.join(__dirname, '..'),
  env,
  stdio: 'inherit',
});
