export { startScriptedModelServer, type ScriptedModelServer } from './scripted-model-server';
export { SCRIPTED_USAGE, SCRIPT_EXHAUSTED_TEXT, type Provider, type RecordedRequest, type ScriptedToolCall, type ScriptedTurn } from './script';
