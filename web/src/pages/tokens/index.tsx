import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function tokensPage() {
  return (
    <Page title="Tokens">
      <p>This page is being built.</p>
    </Page>
  );
}
