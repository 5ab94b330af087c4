import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import type { ProjectServiceDeps } from './service';
import { createProjectService } from './service';

/** What projects take from the features before them: a project's deployments are listed, and destroyed with it. */
export interface ProjectNeeds {
  deployments: ProjectServiceDeps['deployments'];
}

/** The project service, over the core's project store (authz, deployments and the builder read it too). */
export const composeProjects = (core: Core, needs: ProjectNeeds) => ({
  projects: createProjectService({
    store: core.projectStore,
    git: core.gitSource,
    deployments: needs.deployments,
    authz: core.authz,
    users: core.identity,
    lock: core.lock,
    log: core.log,
    orgSettings: core.orgSettings,
  }),
});

export type ProjectsContext = FeatureContext<ReturnType<typeof composeProjects>>;
