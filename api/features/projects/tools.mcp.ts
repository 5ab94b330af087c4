import { z } from 'zod';

import { defineTool, READ, type ToolDef, WRITE } from '../../mcp/tool';
import type { ProjectsContext } from './compose';
import { CreateProjectRequest, Project, ProjectListQuery } from './schemas';
import { projectView } from './views';

export function projectTools(deps: Pick<ProjectsContext, 'projects'>): ToolDef[] {
  const { projects } = deps;
  return [
    defineTool({
      name: 'list_projects',
      title: 'List projects',
      description:
        'Projects you can see (all of them as an org owner or admin, else those you are a member of), by name. ' +
        'Deploy into one with deploy’s projectId.',
      permission: 'project.read',
      input: ProjectListQuery,
      output: z.object({ projects: z.array(Project), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await projects.list(principal, input);
        return { projects: items.map((p) => projectView(p)), total };
      },
    }),
    defineTool({
      name: 'create_project',
      title: 'Create a project',
      description:
        'Creates a project; you become its admin. A name taken in the organisation is refused. repoUrl and ' +
        'gitTokenSecretId follow a source deploy’s rules.',
      permission: 'project.create',
      input: CreateProjectRequest,
      output: z.object({ project: Project }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'project', id: (_i, out) => out?.project.id },
      run: async ({ principal, input }) => ({ project: projectView(await projects.create(principal, input), 0) }),
    }),
  ];
}
