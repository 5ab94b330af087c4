import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function domainsPage() {
  return (
    <Page title="Domains">
      <p>This page is being built.</p>
    </Page>
  );
}
