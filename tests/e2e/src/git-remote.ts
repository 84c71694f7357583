import { git } from '@conveyor/testing';

export { git, seedRemote } from '@conveyor/testing';

/** Whether `branch` exists in the bare repository `remote`. */
export const hasBranch = (remote: string, branch: string): boolean =>
  git(['--git-dir', remote, 'branch', '--list', branch]) !== '';

/** The environment's setup commands stand in for the agent: one commit and one uncommitted file in `origin/`. */
export const AGENT_SETUP = `cd origin && printf 'hello conveyor\\n' > hello.txt && git -c user.name=Agent -c user.email=agent@example.com commit --quiet -am 'agent: rename world' && printf 'left uncommitted\\n' > notes.txt`;

/** Commit subjects of `branch` in `remote`, newest first. */
export const branchLog = (remote: string, branch: string): string[] =>
  git(['--git-dir', remote, 'log', '--format=%s', branch]).split('\n');

/** What a run's branch holds after AGENT_SETUP: the platform's commit of the uncommitted file on the agent's commit. */
export const agentWorkLog = (runId: string): string[] => [
  `conveyor: run ${runId}`,
  'agent: rename world',
  'initial',
];
