import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function gitPage() {
  return (
    <Page title="Git">
      <p>This page is being built.</p>
    </Page>
  );
}
