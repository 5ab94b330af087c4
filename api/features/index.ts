import { aiProvidersFeature } from './ai-providers';
import { auditFeature } from './audit';
import { bucketsFeature } from './buckets';
import { builderFeature } from './builder';
import { cloudProvidersFeature } from './cloud-providers';
import { consoleSessionFeature } from './console-session';
import { databaseSourcesFeature } from './database-sources';
import { databasesFeature } from './databases';
import { deploymentsFeature } from './deployments';
import { domainsFeature } from './domains';
import { featureList } from './feature';
import { gitFeature } from './git';
import { organizationFeature } from './organization';
import { projectsFeature } from './projects';
import { salesFeature } from './sales';
import { secretsFeature } from './secrets';
import { ticketsFeature } from './tickets';
import { tokensFeature } from './tokens';
import { uploadsFeature } from './uploads';
import { usageFeature } from './usage';
import { usersFeature } from './users';
import { volumesFeature } from './volumes';

/**
 * Every feature, once, in composition order: the origins, the OpenAPI document and the MCP tool list follow it, and
 * a feature may take services from the features above it (projects: deployments; builder: AI providers).
 */
export const FEATURES = featureList()
  .add(deploymentsFeature)
  .add(uploadsFeature)
  .add(tokensFeature)
  .add(consoleSessionFeature)
  .add(secretsFeature)
  .add(salesFeature)
  .add(auditFeature)
  .add(projectsFeature)
  .add(usersFeature)
  .add(aiProvidersFeature)
  .add(builderFeature)
  .add(volumesFeature)
  .add(databasesFeature)
  .add(bucketsFeature)
  .add(databaseSourcesFeature)
  .add(organizationFeature)
  .add(cloudProvidersFeature)
  .add(ticketsFeature)
  .add(gitFeature)
  .add(domainsFeature)
  .add(usageFeature);
