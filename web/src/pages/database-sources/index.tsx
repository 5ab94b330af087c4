import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function database_sourcesPage() {
  return (
    <Page title="Database sources">
      <p>This page is being built.</p>
    </Page>
  );
}
