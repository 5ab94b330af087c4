/** One Server-Sent Event as the turn routes write it: `id:` its seq, `event:` its type, `data:` a JSON object. */
export interface TurnEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/**
 * Reads an event stream to its end, handing each event over as it arrives (the page renders the reply while the model
 * writes it). Comment lines (keep-alives) are skipped.
 */
export async function readEvents(res: Response, onEvent: (e: TurnEvent) => void): Promise<void> {
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parse(block);
      if (event) onEvent(event);
    }
  }
}

function parse(block: string): TurnEvent | undefined {
  let id = '';
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  try {
    return { id, event, data: JSON.parse(data.join('\n')) as Record<string, unknown> };
  } catch {
    // A data line that is not JSON is not one of the turn's events.
    return undefined;
  }
}
