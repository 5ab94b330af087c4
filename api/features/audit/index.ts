import { defineFeature } from '../feature';
import { auditRoutes } from './routes.platform';

/** The audit trail: written by the frame for every mutating route (api/http/audit.ts), read here. */
export const auditFeature = defineFeature({ name: 'audit', routes: { platform: auditRoutes } });
