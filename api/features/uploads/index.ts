import { defineFeature } from '../feature';
import { compatUploadRoutes } from './routes.compat';

export const uploadsFeature = defineFeature({ name: 'uploads', routes: { compat: compatUploadRoutes } });
