import { Route, Routes } from 'react-router';

import { DeploymentDetail } from './detail';
import { DeploymentList } from './list';
import { NewDeployment } from './new';

/** Deployments: the list (live), a new deployment (image, zip or folder, Git), and one deployment's detail. */
export default function DeploymentsPage() {
  return (
    <Routes>
      <Route index element={<DeploymentList />} />
      <Route path="new" element={<NewDeployment />} />
      <Route path=":id" element={<DeploymentDetail />} />
    </Routes>
  );
}
