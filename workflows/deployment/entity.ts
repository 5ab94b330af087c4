import type { RecordChange } from '@activities/deployment/releases';
import type { DeploymentWorkflowInput, EntityState } from '@shared/contracts/deployment';
import type { DeploymentStatus } from '@shared/deployments/types';

export type RecordExtra = Omit<RecordChange, 'deploymentId' | 'version' | 'status' | 'message'>;

/** One deployment as its workflow's code sees it: its input, what it knows, and its one way to write status. */
export interface Entity {
  input: DeploymentWorkflowInput;
  state: EntityState;
  /** Writes the record's next version; the validators see the new status at once. */
  record(status: DeploymentStatus, message: string, extra?: RecordExtra): Promise<void>;
}
