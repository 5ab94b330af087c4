import { z } from 'zod';

import { defineTool, READ, type ToolDef, WRITE } from '../../mcp/tool';
import type { VolumesContext } from './compose';
import { CreateVolumeRequest, Volume, VolumeListQuery } from './schemas';
import { volumeView } from './views';

export function volumeTools(deps: Pick<VolumesContext, 'volumes'>): ToolDef[] {
  const { volumes } = deps;
  return [
    defineTool({
      name: 'list_volumes',
      title: 'List volumes',
      description:
        "Persistent volumes by name: the organisation's and those of the projects you can see, each with its size " +
        'and status (creating, ready, failed, deleting).',
      permission: 'volume.read',
      input: VolumeListQuery,
      output: z.object({ volumes: z.array(Volume), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await volumes.list(principal, input);
        return { volumes: items.map(volumeView), total };
      },
    }),
    defineTool({
      name: 'create_volume',
      title: 'Create a volume',
      description:
        'Creates a persistent volume of sizeGb (whole GB) in the organisation or in projectId. It is ready once its ' +
        'status says so (list_volumes); a write past its size fails in the container with "no space left".',
      permission: 'volume.create',
      project: async (_p, input) => input.projectId,
      input: CreateVolumeRequest,
      output: z.object({ volume: Volume }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'volume', id: (_i, out) => out?.volume.id },
      run: async ({ principal, input }) => ({ volume: volumeView(await volumes.create(principal, input)) }),
    }),
  ];
}
