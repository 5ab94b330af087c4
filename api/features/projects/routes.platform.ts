import { type CanOptions, principalOf, projectFrom } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { ProjectsContext } from './compose';
import {
  AddMemberRequest,
  CreateProjectRequest,
  DeleteProjectQuery,
  Member,
  MemberParams,
  Project,
  ProjectIdParams,
  ProjectList,
  ProjectListQuery,
  UpdateMemberRequest,
  UpdateProjectRequest,
} from './schemas';
import { memberView, projectView } from './views';

/** The project in the path: judged by the caller's project role; a project the caller cannot see is 404. */
const thisProject: CanOptions = { project: projectFrom.param('id') };

/** Projects and their members (the platform routes of the interface: docs/architecture.md, "The interface we keep"). */
export function projectRoutes(ctx: Pick<ProjectsContext, 'projects' | 'can'>): RouteDef[] {
  const { projects, can } = ctx;
  const tags = ['Projects'];
  return [
    route({
      method: 'get',
      path: '/projects',
      summary: 'List projects: every one for org owners and admins, the ones you are a member of otherwise',
      tags,
      request: { query: ProjectListQuery },
      before: [can('project.read')],
      responses: { 200: { description: 'A page of projects, by name', schema: success(ProjectList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await projects.list(principalOf(req), query);
        res.json(ok({ projects: items.map((p) => projectView(p)), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'post',
      path: '/projects',
      summary: 'Create a project; you become its admin',
      description:
        "repoUrl and gitTokenSecretId are held to a source deploy's rules: a publicly reachable repository, and a secret you may use (secret.use) bound to repoUrl's host in the project's vaultEnvironment.",
      tags,
      request: { body: CreateProjectRequest },
      before: [can('project.create')],
      responses: {
        200: { description: 'The project', schema: success(Project) },
        409: { description: 'CONFLICT: a project of that name exists in the organisation' },
      },
      handler: async ({ body }, req, res) => {
        res.json(ok(projectView(await projects.create(principalOf(req), body), 0)));
      },
    }),
    route({
      method: 'get',
      path: '/projects/:id',
      summary: 'A project, with how many live deployments it holds',
      description:
        'Its deployments: GET /platform/deployments?projectId={id}. Deployments (either API) join a project with projectId.',
      tags,
      request: { params: ProjectIdParams },
      before: [can('project.read', thisProject)],
      responses: { 200: { description: 'The project', schema: success(Project) } },
      handler: async ({ params }, req, res) => {
        const { project, deploymentCount } = await projects.describe(principalOf(req), params.id);
        res.json(ok(projectView(project, deploymentCount)));
      },
    }),
    route({
      method: 'put',
      path: '/projects/:id',
      summary: 'Update a project: only the fields given change (null removes one); unknown fields are refused',
      tags,
      request: { params: ProjectIdParams, body: UpdateProjectRequest },
      before: [can('project.update', thisProject)],
      responses: {
        200: { description: 'The project as updated', schema: success(Project) },
        409: { description: 'CONFLICT: another project of the organisation has that name' },
      },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(projectView(await projects.update(principalOf(req), params.id, body))));
      },
    }),
    route({
      method: 'delete',
      path: '/projects/:id',
      summary: 'Delete a project; refused while it has live deployments unless ?force=true destroys them first',
      description:
        'Without force, a project with live deployments answers 400 naming them. With force=true each is destroyed through its workflow (as DELETE /platform/deployments/{id}), which also needs deployment.manage in the project.',
      tags,
      request: { params: ProjectIdParams, query: DeleteProjectQuery },
      before: [can('project.delete', thisProject)],
      responses: { 204: { description: 'Deleted, with its memberships' } },
      handler: async ({ params, query }, req, res) => {
        await projects.remove(principalOf(req), params.id, query.force);
        res.status(204).end();
      },
    }),
    route({
      method: 'get',
      path: '/projects/:id/members',
      summary: "A project's members and their roles (admin, developer, viewer)",
      tags,
      request: { params: ProjectIdParams },
      before: [can('project.read', thisProject)],
      responses: { 200: { description: 'Members, oldest first', schema: success(Member.array()) } },
      handler: async ({ params }, req, res) => {
        res.json(ok((await projects.members.list(principalOf(req), params.id)).map(memberView)));
      },
    }),
    route({
      method: 'post',
      path: '/projects/:id/members',
      summary: 'Add a user of the organisation to the project with a role',
      tags,
      request: { params: ProjectIdParams, body: AddMemberRequest },
      before: [can('project.members.manage', thisProject)],
      audit: { idField: 'userId' },
      responses: {
        200: { description: 'The member', schema: success(Member) },
        404: { description: 'PROJECT_NOT_FOUND, or USER_NOT_FOUND: no such user in the organisation' },
        409: { description: 'CONFLICT: the user is a member already (change the role with PATCH)' },
      },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(memberView(await projects.members.add(principalOf(req), params.id, body))));
      },
    }),
    route({
      method: 'patch',
      path: '/projects/:id/members/:userId',
      summary: "Change a member's role; the last admin cannot be demoted",
      tags,
      request: { params: MemberParams, body: UpdateMemberRequest },
      before: [can('project.members.manage', thisProject)],
      responses: {
        200: { description: 'The member', schema: success(Member) },
        400: { description: 'The member is the last admin of the project (make another member admin first)' },
      },
      handler: async ({ params, body }, req, res) => {
        const m = await projects.members.setRole(principalOf(req), params.id, params.userId, body.role);
        res.json(ok(memberView(m)));
      },
    }),
    route({
      method: 'delete',
      path: '/projects/:id/members/:userId',
      summary: 'Remove a member; the last admin cannot be removed',
      tags,
      request: { params: MemberParams },
      before: [can('project.members.manage', thisProject)],
      responses: {
        204: { description: 'Removed' },
        400: { description: 'The member is the last admin of the project (make another member admin first)' },
      },
      handler: async ({ params }, req, res) => {
        await projects.members.remove(principalOf(req), params.id, params.userId);
        res.status(204).end();
      },
    }),
  ];
}
