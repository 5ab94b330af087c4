import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function volumesPage() {
  return (
    <Page title="Volumes">
      <p>This page is being built.</p>
    </Page>
  );
}
