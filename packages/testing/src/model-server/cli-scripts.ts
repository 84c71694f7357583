import path from 'node:path';
import type { ScriptedTurn } from './script';

export type AgentCli = 'claude' | 'codex' | 'gemini';

/** The file the scripted agent reads and edits, its content before and after. */
export const SCRIPT_FILE = { name: 'hello.txt', before: 'hello world\n', after: 'hello conveyor\n' } as const;
/** The file the scripted agent's shell command writes (proof that the command ran in the workspace). */
export const SCRIPT_COMMAND_OUTPUT = 'command-output.txt';
/** What the shell command prints: the edited file, so the conversation shows the edit after the workspace is gone. */
export const SCRIPT_COMMAND_STDOUT = 'hello conveyor';
export const SCRIPT_FINAL_TEXT = 'I renamed world to conveyor in hello.txt.';

const command = `wc -c < ${SCRIPT_FILE.name} > ${SCRIPT_COMMAND_OUTPUT}; cat ${SCRIPT_FILE.name}`;
const patch = `*** Begin Patch\n*** Update File: ${SCRIPT_FILE.name}\n@@\n-hello world\n+hello conveyor\n*** End Patch\n`;

/**
 * Turns that make each CLI read hello.txt, edit it and run a shell command in `workspaceDir`, with the CLI's own
 * tool names and argument shapes, then finish with SCRIPT_FINAL_TEXT.
 */
export function readEditRunScript(cli: AgentCli, workspaceDir: string): ScriptedTurn[] {
  const file = path.join(workspaceDir, SCRIPT_FILE.name);
  const steps: Record<AgentCli, ScriptedTurn[]> = {
    claude: [
      { text: 'Let me look at the file.', toolCalls: [{ name: 'Read', input: { file_path: file } }] },
      {
        toolCalls: [
          { name: 'Edit', input: { file_path: file, old_string: 'world', new_string: 'conveyor' } },
        ],
      },
      { toolCalls: [{ name: 'Bash', input: { command, description: 'Count the bytes' } }] },
    ],
    codex: [
      {
        text: 'Let me look at the file.',
        toolCalls: [{ name: 'exec_command', input: { cmd: `cat ${SCRIPT_FILE.name}` } }],
      },
      { toolCalls: [{ name: 'apply_patch', input: patch }] },
      { toolCalls: [{ name: 'exec_command', input: { cmd: command } }] },
    ],
    gemini: [
      {
        text: 'Let me look at the file.',
        toolCalls: [{ name: 'read_file', input: { file_path: SCRIPT_FILE.name } }],
      },
      {
        toolCalls: [
          {
            name: 'replace',
            input: {
              file_path: file,
              old_string: 'world',
              new_string: 'conveyor',
              instruction: 'Rename world to conveyor',
            },
          },
        ],
      },
      { toolCalls: [{ name: 'run_shell_command', input: { command, description: 'Count the bytes' } }] },
    ],
  };
  return [...steps[cli], { text: SCRIPT_FINAL_TEXT }];
}

/** The tool names readEditRunScript's steps show up with in the run's conversation, in order. */
export const SCRIPT_TOOL_NAMES: Record<AgentCli, string[]> = {
  claude: ['Read', 'Edit', 'Bash'],
  codex: ['shell', 'apply_patch', 'shell'],
  gemini: ['read_file', 'replace', 'run_shell_command'],
};

/** The command longCommandScript runs; `seconds` makes it unique enough to find among the machine's processes. */
export const longCommand = (seconds: number) => `timeout ${seconds} tail -f /dev/null; echo waited`;

/**
 * One turn that makes the CLI run a long command in its shell (a process tree for cancel to end). Not `sleep`:
 * Claude Code refuses long sleeps.
 */
export function longCommandScript(cli: AgentCli, seconds: number): ScriptedTurn[] {
  const cmd = longCommand(seconds);
  const call = {
    claude: { name: 'Bash', input: { command: cmd, description: 'Wait' } },
    codex: { name: 'exec_command', input: { cmd } },
    gemini: { name: 'run_shell_command', input: { command: cmd } },
  }[cli];
  return [{ toolCalls: [call] }, { text: 'Waited.' }];
}
