import { Context } from '@temporalio/activity';

/**
 * When the workflow scheduled the step that is running: the workflow's own clock at that command, the same for every
 * attempt of the step, so a step retried an hour later still dates what it records to when it was asked for.
 */
export const scheduledAt = (): Date => new Date(Context.current().info.scheduledTimestampMs);
