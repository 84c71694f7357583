// Bundles the console with esbuild's JS API (its platform binary comes from the npm registry as an optional
// dependency) into dist/: app.js, app.css and index.html, served by the gateway under /console.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { build } from 'esbuild';

await rm('dist', { recursive: true, force: true });
await mkdir('dist', { recursive: true });
await build({
  entryPoints: { app: 'src/main.tsx' },
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: 'dist',
  logLevel: 'warning',
});
await copyFile('src/index.html', 'dist/index.html');
await copyFile('src/styles.css', 'dist/styles.css');
