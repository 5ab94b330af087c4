import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function ticketsPage() {
  return (
    <Page title="Support tickets">
      <p>This page is being built.</p>
    </Page>
  );
}
