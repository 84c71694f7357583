import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A binary `npm test` builds from the Go module proxy before the tests run (scripts/lib/observability-tools.sh),
 * where it links it: $CONVEYOR_TOOLS_DIR/bin. Missing, the test fails and says how to build it.
 */
export function observabilityTool(name: 'jaeger' | 'prometheus' | 'promtool'): string {
  const dir = process.env.CONVEYOR_TOOLS_DIR || path.join(os.homedir(), '.cache/conveyor/tools');
  const binary = path.join(dir, 'bin', name);
  if (!existsSync(binary))
    throw new Error(
      `${binary} is missing: npm test builds it (or: bash -c 'ROOT=$PWD; source scripts/lib/bootstrap.sh; ensure_observability_tools')`,
    );
  return binary;
}
