import { type ComponentType, lazy, type LazyExoticComponent } from 'react';

/**
 * Every page of the console, once: the navigation and the routes are built from this list. Each page is its own
 * chunk, loaded when first opened, so the first load carries only the shell (the README's bundle figure). A page
 * module default-exports a component that routes its own sub-paths (`/deployments/:id` inside deployments/).
 */
export interface PageEntry {
  path: string;
  label: string;
  group: 'Deploy' | 'Build' | 'Data' | 'Network' | 'Sell' | 'Organisation';
  /** Shown in the navigation only to a session holding this permission (the api refuses the rest anyway). */
  permission?: string;
  component: LazyExoticComponent<ComponentType>;
}

export const PAGES: PageEntry[] = [
  {
    path: 'deployments',
    label: 'Deployments',
    group: 'Deploy',
    permission: 'deployment.read',
    component: lazy(() => import('./deployments')),
  },
  {
    path: 'projects',
    label: 'Projects',
    group: 'Deploy',
    permission: 'project.read',
    component: lazy(() => import('./projects')),
  },
  { path: 'builder', label: 'AI Builder', group: 'Build', component: lazy(() => import('./builder')) },
  {
    path: 'databases',
    label: 'Databases',
    group: 'Data',
    permission: 'database.read',
    component: lazy(() => import('./databases')),
  },
  {
    path: 'volumes',
    label: 'Volumes',
    group: 'Data',
    permission: 'volume.read',
    component: lazy(() => import('./volumes')),
  },
  {
    path: 'buckets',
    label: 'Buckets',
    group: 'Data',
    permission: 'bucket.read',
    component: lazy(() => import('./buckets')),
  },
  {
    path: 'database-sources',
    label: 'Database sources',
    group: 'Data',
    permission: 'database_source.read',
    component: lazy(() => import('./database-sources')),
  },
  {
    path: 'domains',
    label: 'Domains',
    group: 'Network',
    permission: 'domain.read',
    component: lazy(() => import('./domains')),
  },
  { path: 'git', label: 'Git', group: 'Network', permission: 'git.read', component: lazy(() => import('./git')) },
  {
    path: 'seller',
    label: 'Seller',
    group: 'Sell',
    permission: 'sales.manage',
    component: lazy(() => import('./seller')),
  },
  {
    path: 'users',
    label: 'Users and roles',
    group: 'Organisation',
    permission: 'user.manage',
    component: lazy(() => import('./users')),
  },
  { path: 'tokens', label: 'Tokens', group: 'Organisation', component: lazy(() => import('./tokens')) },
  {
    path: 'secrets',
    label: 'Secrets',
    group: 'Organisation',
    permission: 'secret.manage',
    component: lazy(() => import('./secrets')),
  },
  {
    path: 'audit',
    label: 'Audit trail',
    group: 'Organisation',
    permission: 'audit.read',
    component: lazy(() => import('./audit')),
  },
  {
    path: 'usage',
    label: 'Usage',
    group: 'Organisation',
    permission: 'usage.read',
    component: lazy(() => import('./usage')),
  },
  {
    path: 'tickets',
    label: 'Support tickets',
    group: 'Organisation',
    permission: 'ticket.read',
    component: lazy(() => import('./tickets')),
  },
  {
    path: 'ai-providers',
    label: 'AI providers',
    group: 'Organisation',
    component: lazy(() => import('./ai-providers')),
  },
  {
    path: 'providers',
    label: 'Cloud providers',
    group: 'Organisation',
    permission: 'organization.read',
    component: lazy(() => import('./cloud-providers')),
  },
  {
    path: 'settings',
    label: 'Settings',
    group: 'Organisation',
    permission: 'organization.read',
    component: lazy(() => import('./settings')),
  },
];
