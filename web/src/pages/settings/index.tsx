import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function settingsPage() {
  return (
    <Page title="Settings">
      <p>This page is being built.</p>
    </Page>
  );
}
