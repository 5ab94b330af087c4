import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function databasesPage() {
  return (
    <Page title="Databases">
      <p>This page is being built.</p>
    </Page>
  );
}
