/**
 * A region's name: a DNS-label-like token (lowercase letters, digits and inner "-"), so it can name a place in a host
 * name or a label and never carries anything a shell or a query could read as more. Apart from the catalog
 * (./regions.ts) so the configuration can hold ENGINE_REGION to it without importing the deployments' types.
 */
export const REGION_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
export const REGION_RULE = 'lowercase letters, digits and inner "-", at most 63 characters (e.g. local, eu-west)';
