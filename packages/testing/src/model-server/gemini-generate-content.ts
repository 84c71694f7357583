import type { ServerResponse } from 'node:http';
import { SCRIPTED_USAGE, type ScriptedTurn } from './script';
import { sendJson, sendSse, startSse } from './sse';

function candidateOf(turn: ScriptedTurn): object {
  const parts: object[] = [];
  if (turn.text) parts.push({ text: turn.text });
  for (const call of turn.toolCalls ?? [])
    parts.push({ functionCall: { name: call.name, args: call.input } });
  return { content: { role: 'model', parts }, finishReason: 'STOP', index: 0 };
}

const usageMetadata = {
  promptTokenCount: SCRIPTED_USAGE.inputTokens,
  candidatesTokenCount: SCRIPTED_USAGE.outputTokens,
  totalTokenCount: SCRIPTED_USAGE.inputTokens + SCRIPTED_USAGE.outputTokens,
};

/** Gemini API `models/{model}:streamGenerateContent?alt=sse` (streamed) or `:generateContent` (one JSON). */
export function answerGemini(res: ServerResponse, stream: boolean, turn: ScriptedTurn): void {
  const chunk = { candidates: [candidateOf(turn)], usageMetadata, modelVersion: 'scripted' };
  if (!stream) {
    sendJson(res, 200, chunk);
    return;
  }
  startSse(res);
  sendSse(res, chunk);
  res.end();
}
