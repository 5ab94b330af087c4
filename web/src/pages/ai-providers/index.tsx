import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function ai_providersPage() {
  return (
    <Page title="AI providers">
      <p>This page is being built.</p>
    </Page>
  );
}
