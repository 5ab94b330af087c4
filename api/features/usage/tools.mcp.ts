import { defineTool, READ, type ToolDef } from '../../mcp/tool';
import type { UsageContext } from './compose';
import { USAGE_DESCRIPTION } from './routes.platform';
import { Usage, UsageQuery } from './schemas';

/** The organisation's usage, read as GET /platform/usage answers it. */
export function usageTools(deps: Pick<UsageContext, 'usage'>): ToolDef[] {
  return [
    defineTool({
      name: 'get_usage',
      title: 'Usage of the organisation',
      description: USAGE_DESCRIPTION,
      permission: 'usage.read',
      input: UsageQuery,
      output: Usage,
      annotations: { ...READ, openWorldHint: false },
      run: async ({ principal, input }) => deps.usage.usage(principal, input),
    }),
  ];
}
