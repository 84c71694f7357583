export { startScriptedModelServer, type ScriptedModelServer } from './scripted-model-server';
export {
  SCRIPTED_USAGE,
  SCRIPT_EXHAUSTED_TEXT,
  type Provider,
  type RecordedRequest,
  type ScriptedToolCall,
  type ScriptedTurn,
} from './script';
export {
  longCommand,
  longCommandScript,
  readEditRunScript,
  SCRIPT_COMMAND_OUTPUT,
  SCRIPT_COMMAND_STDOUT,
  SCRIPT_FILE,
  SCRIPT_FINAL_TEXT,
  SCRIPT_TOOL_NAMES,
  type AgentCli,
} from './cli-scripts';
