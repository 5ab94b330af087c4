import { defineFeature } from '../feature';
import { composeUploads } from './compose';
import { compatUploadRoutes } from './routes.compat';
import { uploadTools } from './tools.mcp';

export const uploadsFeature = defineFeature({
  name: 'uploads',
  compose: composeUploads,
  routes: { compat: compatUploadRoutes },
  tools: uploadTools,
});
