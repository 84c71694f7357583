import { z } from 'zod';

/** AmbientAgentConfig `mcp_servers` entry (api-contract McpServerConfig): exactly one of warp_id, command, url. */
const mcpServerConfigSchema = z
  .object({
    warp_id: z.string().min(1).optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    env: z.record(z.string()).default({}),
    url: z.string().url().optional(),
    headers: z.record(z.string()).default({}),
  })
  .refine(
    (s) => [s.warp_id, s.command, s.url].filter((v) => v !== undefined).length === 1,
    'exactly one of warp_id, command, url must be set',
  );

/** An MCP server a CLI can start or reach by itself. */
export type McpServer =
  | { name: string; transport: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  | { name: string; transport: 'http' | 'sse'; url: string; headers: Record<string, string> };

/**
 * The run's MCP servers in a CLI-neutral form. A URL whose path ends in `/sse` is the legacy SSE transport, any other
 * URL streamable HTTP. `warp_id` servers (shared servers of the Warp platform) have no definition here: they are
 * returned in `unsupported` for the run's log.
 */
export function mcpServersOf(config: Record<string, unknown>): {
  servers: McpServer[];
  unsupported: string[];
} {
  const raw = config.mcp_servers;
  if (!raw || typeof raw !== 'object') return { servers: [], unsupported: [] };
  const servers: McpServer[] = [];
  const unsupported: string[] = [];
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const parsed = mcpServerConfigSchema.safeParse(value);
    if (!parsed.success || parsed.data.warp_id) {
      unsupported.push(name);
      continue;
    }
    const s = parsed.data;
    if (s.command) servers.push({ name, transport: 'stdio', command: s.command, args: s.args, env: s.env });
    else if (s.url)
      servers.push({
        name,
        transport: new URL(s.url).pathname.endsWith('/sse') ? 'sse' : 'http',
        url: s.url,
        headers: s.headers,
      });
  }
  return { servers, unsupported };
}
