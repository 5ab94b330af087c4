import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read any field of a tool's answer
export type Structured = Record<string, any>;

/**
 * One tools/call result as an agent reads it: a success's structuredContent, or a failure's text, whose first line
 * is `CODE: message` and whose last line is the failure as JSON (api/mcp/errors.ts). A failure carries no
 * structuredContent: a client checks that against the tool's outputSchema.
 */
export function readResult(r: CallToolResult): { isError: boolean; s: Structured; text: string } {
  const text = r.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  if (r.isError !== true) return { isError: false, s: r.structuredContent as Structured, text };
  expect(r.structuredContent).toBeUndefined();
  const lines = text.split('\n');
  const s = JSON.parse(lines.at(-1)!) as Structured;
  expect(lines[0]).toBe(`${s.code as string}: ${(s.message as string).split('\n')[0]!}`);
  return { isError: true, s, text };
}

/**
 * An agent's MCP session with the harness's api under `token`, through the official SDK client, and `call`, which
 * calls a tool and reads its result as above. The caller closes the client.
 */
export async function connectAgent(baseUrl: string, token: string, name = 'slipway-test') {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  const call = async (tool: string, args: Record<string, unknown>) =>
    readResult((await client.callTool({ name: tool, arguments: args })) as CallToolResult);
  return { client, call };
}
