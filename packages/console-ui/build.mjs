// Bundles the console with esbuild's JS API (its platform binary comes from the npm registry as an optional
// dependency) into dist/: app.js, the chunks it imports on demand (chunks/), styles.css and index.html, served by
// the gateway under /console.
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

await rm('dist', { recursive: true, force: true });
await mkdir('dist', { recursive: true });
await build({
  entryPoints: { app: 'src/main.tsx' },
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'esm',
  // What one page alone needs (the schedule form's cron-parser) is a chunk loaded when that page asks for it.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: 'dist',
  logLevel: 'warning',
});
await copyFile('src/index.html', 'dist/index.html');
// One stylesheet: uPlot's own rules (bundled, not from a CDN) before the console's.
const uplotCss = createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css');
await writeFile(
  'dist/styles.css',
  (await readFile(uplotCss, 'utf8')) + '\n' + (await readFile('src/styles.css', 'utf8')),
);
