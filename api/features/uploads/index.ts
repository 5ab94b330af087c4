import { defineFeature } from '../feature';
import { composeUploads } from './compose';
import { compatUploadRoutes } from './routes.compat';

export const uploadsFeature = defineFeature({
  name: 'uploads',
  compose: composeUploads,
  routes: { compat: compatUploadRoutes },
});
