import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function usagePage() {
  return (
    <Page title="Usage">
      <p>This page is being built.</p>
    </Page>
  );
}
