import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function sellerPage() {
  return (
    <Page title="Seller">
      <p>This page is being built.</p>
    </Page>
  );
}
