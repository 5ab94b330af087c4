import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function secretsPage() {
  return (
    <Page title="Secrets">
      <p>This page is being built.</p>
    </Page>
  );
}
