import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function bucketsPage() {
  return (
    <Page title="Buckets">
      <p>This page is being built.</p>
    </Page>
  );
}
