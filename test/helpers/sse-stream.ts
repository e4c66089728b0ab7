/**
 * A server-sent events stream read raw with fetch, for tests that compare events byte for byte:
 * each event keeps its `data:` line exactly as sent (an EventSource would hand over the same
 * text, but hides the status and body of a refused stream, which tests compare with a read's).
 */

export interface StreamEvent {
  readonly id: string;
  readonly event: string;
  /** The data line as sent. */
  readonly data: string;
}

export interface RawStream {
  readonly status: number;
  /** A refused stream's body (its JSON error); '' for an open one. */
  readonly body: string;
  /** The events received so far, in arrival order. */
  readonly events: StreamEvent[];
  close(): void;
}

/** Opens `url` as an event stream; resolves once the answer's head (and a refusal's body) is in. */
export async function openStream(
  url: string,
  headers: Record<string, string> = {},
): Promise<RawStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const events: StreamEvent[] = [];
  const close = () => controller.abort();
  if (response.status !== 200) {
    return { status: response.status, body: await response.text(), events, close };
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const pump = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id = '';
        let event = '';
        let data: string | null = null;
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: '))
            data = data === null ? line.slice(6) : `${data}\n${line.slice(6)}`;
        }
        // Comments (keep-alive) and the retry line carry no data.
        if (data !== null) events.push({ id, event, data });
      }
    }
  };
  pump().catch(() => {});
  return { status: 200, body: '', events, close };
}

/** The elements of a JSON array's text, each exactly as written (no re-serializing). */
export function splitJsonArray(text: string): string[] {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[') || !trimmed.endsWith(']')) throw new Error(`not an array: ${text}`);
  const items: string[] = [];
  let depth = 0;
  let start = 1;
  let inString = false;
  for (let i = 1; i < trimmed.length - 1; i++) {
    const c = trimmed[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      items.push(trimmed.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = trimmed.slice(start, -1).trim();
  if (last !== '') items.push(last);
  return items;
}
