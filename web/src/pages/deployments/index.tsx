import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function deploymentsPage() {
  return (
    <Page title="Deployments">
      <p>This page is being built.</p>
    </Page>
  );
}
