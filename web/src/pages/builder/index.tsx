import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function builderPage() {
  return (
    <Page title="AI Builder">
      <p>This page is being built.</p>
    </Page>
  );
}
