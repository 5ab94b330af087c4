import type { ChatEvent, StopReason, ToolCall } from './types';

/** One model answer gathered whole: what a turn stores as the assistant's message and acts on. */
export interface ModelAnswer {
  text: string;
  toolCalls: ToolCall[];
  usage: { inputTokens: number; outputTokens: number } | undefined;
  stop: { reason: StopReason; raw: string | null };
}

/**
 * Reads a stream of events to its end, calling `onEvent` for each as it comes (a turn forwards text deltas to the
 * session while it collects). The stream's errors propagate unchanged.
 */
export async function collectAnswer(
  events: AsyncIterable<ChatEvent>,
  onEvent?: (event: ChatEvent) => void | Promise<void>,
): Promise<ModelAnswer> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  let usage: ModelAnswer['usage'];
  let stop: ModelAnswer['stop'] | undefined;
  for await (const event of events) {
    await onEvent?.(event);
    if (event.type === 'text') text += event.text;
    else if (event.type === 'tool_call') toolCalls.push(event.call);
    else if (event.type === 'usage') usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
    else stop = { reason: event.reason, raw: event.raw };
  }
  // The adapters always end with a stop event; its absence is a bug in one of them, not a provider's fault.
  if (!stop) throw new Error('a model stream ended without its stop event');
  return { text, toolCalls, usage, stop };
}
