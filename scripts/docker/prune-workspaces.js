#!/usr/bin/env node
// Used only inside image builds (scripts/docker/stage-app.sh, for deploy/Dockerfile and scripts/kubernetes/images.sh), on a throwaway copy of the
// repository:
//   node scripts/docker/prune-workspaces.js @conveyor/gateway [@conveyor/runner …]
// Rewrites the root package.json so its workspaces are exactly the services named and the @conveyor/* packages they need
// at runtime (its `dependencies`, transitively; never `devDependencies`), and drops every devDependencies block,
// so a following `npm install --omit=dev` installs that service's production dependencies and nothing else
// (npm's own `--workspace` filter still links dev-only workspaces such as @conveyor/testing, and with them Prisma's CLI).
// Prints the kept workspace directories, one per line.
const fs = require('node:fs');
const path = require('node:path');

const root = process.cwd();
const targets = process.argv.slice(2);
if (targets.length === 0) {
  console.error('usage: prune-workspaces.js <workspace package name>...');
  process.exit(2);
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const writeJson = (file, value) => fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

const rootManifest = readJson(path.join(root, 'package.json'));
const workspaces = new Map(); // package name -> directory relative to root
const addWorkspace = (dir) => {
  const manifest = path.join(root, dir, 'package.json');
  if (fs.existsSync(manifest)) workspaces.set(readJson(manifest).name, dir);
};
for (const pattern of rootManifest.workspaces ?? []) {
  if (!pattern.includes('*')) {
    addWorkspace(pattern.replace(/\/$/, ''));
    continue;
  }
  if (!pattern.endsWith('/*') || pattern.slice(0, -2).includes('*'))
    throw new Error(`unsupported workspace pattern ${pattern}`);
  const parent = pattern.slice(0, -2);
  if (!fs.existsSync(path.join(root, parent))) continue;
  for (const entry of fs.readdirSync(path.join(root, parent), { withFileTypes: true })) {
    if (entry.isDirectory()) addWorkspace(`${parent}/${entry.name}`);
  }
}
for (const target of targets) if (!workspaces.has(target)) throw new Error(`${target} is not a workspace`);

const keep = new Set();
const visit = (name) => {
  if (keep.has(name)) return;
  keep.add(name);
  const manifest = readJson(path.join(root, workspaces.get(name), 'package.json'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) if (workspaces.has(dep)) visit(dep);
};
targets.forEach(visit);

const dirs = [...keep].map((name) => workspaces.get(name)).sort();
for (const dir of dirs) {
  const file = path.join(root, dir, 'package.json');
  const manifest = readJson(file);
  delete manifest.devDependencies;
  writeJson(file, manifest);
}
delete rootManifest.devDependencies;
rootManifest.workspaces = dirs;
writeJson(path.join(root, 'package.json'), rootManifest);
console.log(dirs.join('\n'));
