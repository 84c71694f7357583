import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/** Where scripts/lib/deploy-tools.sh installs kustomize, kubeconform, helm and the Kubernetes schemas. */
const TOOLS_DIR = process.env.CONVEYOR_TOOLS_DIR ?? path.join(os.homedir(), '.cache/conveyor/tools');
const SCHEMAS = path.join(TOOLS_DIR, 'k8s-schemas/current');

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string }>;
  };
  [field: string]: unknown;
}

function tool(name: 'kustomize' | 'kubeconform' | 'helm'): string {
  const bin = path.join(TOOLS_DIR, 'bin', name);
  if (!existsSync(bin))
    throw new Error(`${bin} is missing: npm test installs it (scripts/lib/deploy-tools.sh)`);
  return bin;
}

/** `kustomize build DIR`, parsed into objects in kustomize's output order. */
export function kustomizeBuild(dir: string): KubeObject[] {
  const rendered = execFileSync(tool('kustomize'), ['build', dir], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return parseAllDocuments(rendered).map((doc) => doc.toJS() as KubeObject);
}

/** `helm ARGS…`: its exit status and output (a failed render is a result here, not an exception). */
export function helm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(tool('helm'), args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** `helm template conveyor CHART` with these values files and `--set` pairs, parsed into objects in helm's order. */
export function helmTemplate(chart: string, valuesFiles: string[], set: string[] = []): KubeObject[] {
  const run = helm([
    'template',
    'conveyor',
    chart,
    ...valuesFiles.flatMap((file) => ['--values', file]),
    ...set.flatMap((pair) => ['--set', pair]),
  ]);
  if (run.status !== 0) throw new Error(`helm template failed: ${run.stderr}`);
  return parseAllDocuments(run.stdout)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

interface KubeconformResource {
  kind: string;
  name: string;
  status: 'statusValid' | 'statusInvalid' | 'statusError' | 'statusSkipped' | 'statusEmpty';
  /** Every cause, e.g. "... - at '/spec': additional properties 'replicaz' not allowed". */
  msg?: string;
}

/**
 * Errors of each object against the Kubernetes API schemas, by kubeconform in strict mode (unknown fields are
 * errors); an unknown apiVersion/kind is an error too, so a typo never passes silently. Keyed `Kind/name`.
 */
export function kubeconformErrors(objects: KubeObject[]): Map<string, string[]> {
  const args = [
    '-strict',
    '-output',
    'json',
    '-schema-location',
    `${SCHEMAS}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
    '-',
  ];
  const input = objects.map((o) => JSON.stringify(o)).join('\n---\n');
  let stdout: string;
  try {
    stdout = execFileSync(tool('kubeconform'), args, { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  } catch (err) {
    // Exit status 1 means "some resource is invalid"; the JSON report is still on stdout.
    stdout = (err as { stdout?: string }).stdout ?? '';
    if (!stdout) throw err;
  }
  const report = JSON.parse(stdout) as { resources: KubeconformResource[] };
  const errors = new Map<string, string[]>();
  for (const r of report.resources) {
    if (r.status === 'statusValid') continue;
    const id = `${r.kind}/${r.name}`;
    errors.set(id, [...(errors.get(id) ?? []), r.msg ?? r.status]);
  }
  return errors;
}
