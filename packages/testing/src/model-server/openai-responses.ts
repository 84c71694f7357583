import type { ServerResponse } from 'node:http';
import { SCRIPTED_USAGE, type ScriptedTurn } from './script';
import { sendJson, sendSse, startSse } from './sse';

function itemsOf(turn: ScriptedTurn, nextId: () => string): object[] {
  const items: object[] = [];
  if (turn.text) {
    items.push({
      type: 'message',
      role: 'assistant',
      id: `msg_${nextId()}`,
      status: 'completed',
      content: [{ type: 'output_text', text: turn.text, annotations: [] }],
    });
  }
  for (const call of turn.toolCalls ?? []) {
    const callId = `call_${nextId()}`;
    items.push(
      typeof call.input === 'string'
        ? {
            type: 'custom_tool_call',
            id: `ctc_${nextId()}`,
            status: 'completed',
            call_id: callId,
            name: call.name,
            input: call.input,
          }
        : {
            type: 'function_call',
            id: `fc_${nextId()}`,
            status: 'completed',
            call_id: callId,
            name: call.name,
            arguments: JSON.stringify(call.input),
          },
    );
  }
  return items;
}

/** OpenAI Responses API (`POST /v1/responses`), streamed as SSE the way Codex reads it. */
export function answerOpenAiResponses(
  res: ServerResponse,
  body: { stream?: boolean; model?: string },
  turn: ScriptedTurn,
  nextId: () => string,
): void {
  const id = `resp_${nextId()}`;
  const output = itemsOf(turn, nextId);
  const usage = {
    input_tokens: SCRIPTED_USAGE.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: SCRIPTED_USAGE.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: SCRIPTED_USAGE.inputTokens + SCRIPTED_USAGE.outputTokens,
  };
  const response = {
    id,
    object: 'response',
    status: 'completed',
    model: body.model ?? 'scripted',
    output,
    usage,
  };
  if (body.stream === false) {
    sendJson(res, 200, response);
    return;
  }
  startSse(res);
  let sequence = 0;
  const send = (data: Record<string, unknown>) =>
    sendSse(res, { ...data, sequence_number: sequence++ }, data.type as string);
  send({ type: 'response.created', response: { ...response, status: 'in_progress', output: [] } });
  output.forEach((item, index) => {
    send({ type: 'response.output_item.added', output_index: index, item });
    const text = (item as { type: string; content?: Array<{ text: string }> }).content?.[0]?.text;
    if (text)
      send({
        type: 'response.output_text.delta',
        output_index: index,
        content_index: 0,
        delta: text,
        item_id: (item as { id: string }).id,
      });
    send({ type: 'response.output_item.done', output_index: index, item });
  });
  send({ type: 'response.completed', response });
  res.end();
}
