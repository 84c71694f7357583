import { runCli, type RunningPlatform } from './start-platform';
import { uniqueName } from './unique-name';

export type TeamRole = 'ADMIN' | 'MEMBER';

/** A new team of its own (through the operator CLI): nothing another test does touches it. */
export async function createTeam(platform: RunningPlatform, name = uniqueName('Other')): Promise<string> {
  return (JSON.parse(await runCli(['team', 'create', '--name', name], platform.env)) as { id: string }).id;
}

/** A new user (of the dev team and a MEMBER unless said), and an API key of theirs. */
export async function createMember(
  platform: RunningPlatform,
  { teamId = 'team_dev', role = 'MEMBER', email }: { teamId?: string; role?: TeamRole; email?: string } = {},
): Promise<{ userId: string; key: string }> {
  email ??= `${uniqueName(role.toLowerCase())}@members.test`;
  const user = JSON.parse(
    await runCli(['user', 'create', '--team', teamId, '--email', email, '--role', role], platform.env),
  ) as { id: string };
  const { key } = JSON.parse(await runCli(['key', 'create', '--user', user.id], platform.env)) as {
    key: string;
  };
  return { userId: user.id, key };
}

/** An admin of a new team: everything of the dev team must look to them exactly like something missing. */
export async function otherTeamAdmin(
  platform: RunningPlatform,
): Promise<{ teamId: string; userId: string; key: string }> {
  const teamId = await createTeam(platform);
  return { teamId, ...(await createMember(platform, { teamId, role: 'ADMIN' })) };
}
