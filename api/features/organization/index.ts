import { defineFeature } from '../feature';
import { composeOrganization } from './compose';
import { organizationRoutes } from './routes.platform';

/** The organisation's settings: defaults and limits other features act on, and the seller settings in one view. */
export const organizationFeature = defineFeature({
  name: 'organization',
  compose: composeOrganization,
  routes: { platform: organizationRoutes },
});
