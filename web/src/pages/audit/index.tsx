import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function auditPage() {
  return (
    <Page title="Audit trail">
      <p>This page is being built.</p>
    </Page>
  );
}
