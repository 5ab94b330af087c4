import { AppError } from '../errors';

/**
 * A deployment the caller's organisation does not hold, or one in a project the caller cannot see: the same answer
 * for both (another organisation's ID reads as no ID at all), from the api's services, its authorize and MCP alike.
 */
export const deploymentNotFound = (id: string) =>
  new AppError('DEPLOYMENT_NOT_FOUND', `No deployment ${id} in this organisation.`, { deploymentId: id });
