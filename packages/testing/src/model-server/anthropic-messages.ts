import type { ServerResponse } from 'node:http';
import { SCRIPTED_USAGE, type ScriptedTurn } from './script';
import { sendJson, sendSse, startSse } from './sse';

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

function blocksOf(turn: ScriptedTurn, nextId: () => string): Block[] {
  const blocks: Block[] = [];
  if (turn.text) blocks.push({ type: 'text', text: turn.text });
  for (const call of turn.toolCalls ?? [])
    blocks.push({ type: 'tool_use', id: `toolu_${nextId()}`, name: call.name, input: call.input });
  return blocks;
}

/** Anthropic Messages API (`POST /v1/messages`): a message, streamed as SSE when the request asks for it. */
export function answerAnthropic(
  res: ServerResponse,
  body: { stream?: boolean; model?: string },
  turn: ScriptedTurn,
  nextId: () => string,
): void {
  const blocks = blocksOf(turn, nextId);
  const stopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const message = {
    id: `msg_${nextId()}`,
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'scripted',
    stop_sequence: null,
  };
  const usage = {
    input_tokens: SCRIPTED_USAGE.inputTokens,
    output_tokens: SCRIPTED_USAGE.outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  if (!body.stream) {
    sendJson(res, 200, { ...message, content: blocks, stop_reason: stopReason, usage });
    return;
  }
  startSse(res);
  sendSse(
    res,
    {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    },
    'message_start',
  );
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      sendSse(
        res,
        { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
        'content_block_start',
      );
      sendSse(
        res,
        { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } },
        'content_block_delta',
      );
    } else {
      sendSse(
        res,
        { type: 'content_block_start', index, content_block: { ...block, input: {} } },
        'content_block_start',
      );
      sendSse(
        res,
        {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        },
        'content_block_delta',
      );
    }
    sendSse(res, { type: 'content_block_stop', index }, 'content_block_stop');
  });
  sendSse(
    res,
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    },
    'message_delta',
  );
  sendSse(res, { type: 'message_stop' }, 'message_stop');
  res.end();
}
